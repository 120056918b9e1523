package resolvers

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/governance/flowexport"
	"github.com/headwater-data/headwater/lineage"
)

// exportServer mounts the flow export on the world's store, policy and audit, the principal from the test header
// (as serveAs does for /graphql).
func (w *world) exportServer() *httptest.Server {
	w.t.Helper()
	red, err := authz.NewRedactor(testRedactKey)
	if err != nil {
		w.t.Fatal(err)
	}
	cat, err := catalog.New(w.fx.Store, catalog.Options{Policy: w.policy, Redactor: red, Clock: w.fx.Clock()})
	if err != nil {
		w.t.Fatal(err)
	}
	svc, err := lineage.NewService(w.fx.Store, lineage.Options{Config: lineage.Config{CursorKey: testCursorKey, TrustGapsTTL: -1},
		Policy: w.policy, Redactor: red, Catalog: cat, Clock: w.fx.Clock()})
	if err != nil {
		w.t.Fatal(err)
	}
	mux := http.NewServeMux()
	flowexport.NewHandler(svc, w.audit, w.fx.Clock(), nil).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		p := authz.Principal{Subject: r.Header.Get(principalHeader), Kind: "user"}
		mux.ServeHTTP(rw, r.WithContext(authz.WithPrincipal(r.Context(), p)))
	}))
	w.t.Cleanup(srv.Close)
	return srv
}

func getExport(t *testing.T, srv *httptest.Server, principal, path string, q url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path+"?"+q.Encode(), nil)
	req.Header.Set(principalHeader, principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestFlowExport: GET /api/v1/governance/flow.csv and .json answer piiFlow with its arguments as parameters. The
// admin's CSV has the fixed header and one row per origin (mid.c), reached field (out.c through the hidden job,
// h1.c, behind.c) with its rule path, and the JSON the same flow with names spelled out. narrow2 gets only what
// piiFlow shows it (no hidden name anywhere), narrow (no VIEW_SENSITIVE) the header alone; a `from` you may not see
// is refused exactly like one that does not exist (404), an unknown or malformed parameter is a 400 naming it; every
// call, refused ones included, writes one audit record naming the operation.
func TestFlowExport(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	srv := w.exportServer()
	from := url.Values{"tag": {"pii"}, "namespace": {w.fx.NS}, "name": {"pub.mid"}, "depth": {"5"}}
	code, body := getExport(t, srv, w.admin, flowexport.PathCSV, from)
	if code != http.StatusOK {
		t.Fatalf("admin csv: %d %s", code, body)
	}
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, body)
	}
	if !slices.Equal(rows[0], flowexport.Header) {
		t.Fatalf("header %v, want %v", rows[0], flowexport.Header)
	}
	col := func(name string) int { return slices.Index(flowexport.Header, name) }
	var got []string
	for _, r := range rows[1:] {
		if len(r) != len(flowexport.Header) {
			t.Fatalf("row with %d columns: %v", len(r), r)
		}
		got = append(got, strings.Join([]string{r[col("kind")], r[col("dataset")], r[col("field")], r[col("effect")],
			r[col("distance")], r[col("origin_dataset")] + "." + r[col("origin_field")], r[col("path_rules")]}, "|"))
	}
	h1 := w.secrets[0]
	want := []string{"ORIGIN|pub.mid|c|||.|", "REACHED|pub.out|c|CARRIED|1|pub.mid.c|IDENTITY",
		"REACHED|" + h1 + "|c|CARRIED|1|pub.mid.c|IDENTITY", "REACHED|pub.behind|c|CARRIED|2|pub.mid.c|IDENTITY > IDENTITY"}
	for _, wnt := range want {
		if !slices.Contains(got, wnt) {
			t.Errorf("admin csv lacks %q:\n%s", wnt, strings.Join(got, "\n"))
		}
	}
	code, body = getExport(t, srv, w.admin, flowexport.PathJSON, from)
	var js struct {
		Tag     string
		Origins []struct{ Dataset, Field string }
		Reached []struct {
			Dataset, Field, Effect string
			Path                   []struct {
				Rule string
				Job  *struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &js); code != http.StatusOK || err != nil || js.Tag != "pii" || len(js.Origins) != 1 || len(js.Reached) != 3 {
		t.Errorf("admin json: %d %v %s", code, err, body)
	}
	code, body = getExport(t, srv, w.narrow2, flowexport.PathCSV, from)
	if code != http.StatusOK || strings.Count(body, "\n") != 3 || !strings.Contains(body, "REACHED,") || strings.Contains(body, "pub.behind") {
		t.Errorf("narrow2 csv: want header, origin, out.c: %d\n%s", code, body)
	}
	w.noLeak("flow.csv as narrow2", []byte(body))
	_, body = getExport(t, srv, w.narrow2, flowexport.PathJSON, from)
	w.noLeak("flow.json as narrow2", []byte(body))
	if code, body = getExport(t, srv, w.narrow, flowexport.PathCSV, from); code != http.StatusOK || strings.Count(body, "\n") != 1 {
		t.Errorf("narrow (no VIEW_SENSITIVE) should get the header alone: %d\n%s", code, body)
	}
	hidden := url.Values{"tag": {"pii"}, "namespace": {w.fx.NS}, "name": {h1}}
	missing := url.Values{"tag": {"pii"}, "namespace": {w.fx.NS}, "name": {"pub.nothing-here"}}
	c1, b1 := getExport(t, srv, w.narrow2, flowexport.PathCSV, hidden)
	c2, b2 := getExport(t, srv, w.narrow2, flowexport.PathCSV, missing)
	if c1 != http.StatusNotFound || c2 != c1 || strings.ReplaceAll(b1, h1, "X") != strings.ReplaceAll(b2, "pub.nothing-here", "X") {
		t.Errorf("a hidden from should be refused like a missing one: %d %s / %d %s", c1, b1, c2, b2)
	}
	// (the message echoes the name asked, the caller's own input, for the hidden and the missing one alike)
	for param, q := range map[string]url.Values{
		"colour:": {"tag": {"pii"}, "colour": {"red"}}, "tag:": {"depth": {"3"}}, "depth:": {"tag": {"pii"}, "depth": {"x"}},
		"asOf:": {"tag": {"pii"}, "asOf": {"yesterday"}}, "namespace, name:": {"tag": {"pii"}, "name": {"pub.mid"}},
	} {
		if code, body := getExport(t, srv, w.admin, flowexport.PathCSV, q); code != http.StatusBadRequest || !strings.Contains(body, param) {
			t.Errorf("%v: want 400 naming %s: %d %s", q, param, code, body)
		}
	}
	n := 0
	for _, r := range w.audit.all() {
		if strings.Contains(r.Operation, "http GET "+flowexport.PathCSV) || strings.Contains(r.Operation, "http GET "+flowexport.PathJSON) {
			n++
			if !strings.Contains(r.Operation, `piiFlow(tag: "pii")`) && !strings.Contains(r.Operation, "flow.csv") {
				t.Errorf("audit operation: %q", r.Operation)
			}
		}
	}
	if n != 7 { // admin csv, json; narrow2 csv, json; narrow csv; the two refused (the bad requests are not audited)
		t.Errorf("want 7 audit records of the export, got %d: %+v", n, w.audit.all())
	}
}
