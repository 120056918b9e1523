package resolvers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

type piiFlowAnswer struct {
	Data struct {
		PiiFlow struct {
			Origins []struct {
				Field struct{ Path string }
			}
			Reached []struct {
				Field struct {
					Path    string
					Dataset struct{ Name string }
				}
				Effect string
			}
			Stops []struct {
				Field  struct{ Path string }
				Reason string
			}
			PermissionsFiltered bool
		} `json:"piiFlow"`
	} `json:"data"`
	Errors []gqlError `json:"errors"`
}

func (w *world) piiFlow(principal string, vars map[string]any) piiFlowAnswer {
	w.t.Helper()
	var a piiFlowAnswer
	body := w.post(principal, leakPiiFlowQ, vars)
	if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) > 0 {
		w.t.Fatalf("piiFlow as %s: %v %s", principal, err, body)
	}
	return a
}

func reachedNames(a piiFlowAnswer) string {
	var out []string
	for _, r := range a.Data.PiiFlow.Reached {
		out = append(out, r.Field.Dataset.Name+"."+r.Field.Path+" "+r.Effect)
	}
	return strings.Join(out, ", ")
}

// TestPiiFlowPermissions: the sensitive class pii (on pub.mid, a dataset-level tag) flows mid.c -> out.c (through a
// hidden job) and mid.c -> H1.c -> behind.c (H1 hidden). The admin sees all of it; a principal with VIEW_SENSITIVE
// on pub sees the flow into out.c only (not H1, nor behind.c that only a hidden node reaches), flagged
// permissionsFiltered; one without VIEW_SENSITIVE sees no origin at all. Every call writes an audit record naming
// piiFlow, also when it touched nothing.
func TestPiiFlowPermissions(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	from := map[string]any{"from": map[string]any{"dataset": map[string]any{"namespace": w.fx.NS, "name": "pub.mid"}}}
	admin := w.piiFlow(w.admin, from)
	if got := reachedNames(admin); !strings.Contains(got, "pub.out.c CARRIED") || !strings.Contains(got, "pub.behind.c CARRIED") ||
		len(admin.Data.PiiFlow.Origins) != 1 || admin.Data.PiiFlow.PermissionsFiltered {
		t.Fatalf("admin flow: %s %+v", got, admin.Data.PiiFlow)
	}
	sens := w.piiFlow(w.narrow2, from)
	if got := reachedNames(sens); got != "pub.out.c CARRIED" || len(sens.Data.PiiFlow.Origins) != 1 || !sens.Data.PiiFlow.PermissionsFiltered {
		t.Errorf("narrow2 (VIEW_SENSITIVE on pub) flow: %s, %d origins, filtered %v", got, len(sens.Data.PiiFlow.Origins),
			sens.Data.PiiFlow.PermissionsFiltered)
	}
	w.noLeak("piiFlow as narrow2", w.post(w.narrow2, leakPiiFlowQ, from))
	plain := w.piiFlow(w.narrow, from)
	if len(plain.Data.PiiFlow.Origins) != 0 || len(plain.Data.PiiFlow.Reached) != 0 || len(plain.Data.PiiFlow.Stops) != 0 {
		t.Errorf("narrow (no VIEW_SENSITIVE) should see no flow of a sensitive class: %+v", plain.Data.PiiFlow)
	}
	n := 0
	for _, r := range w.audit.all() {
		if strings.Contains(r.Operation, `piiFlow(tag: "pii")`) {
			n++
		}
	}
	if n != 4 { // admin, narrow2 twice (the leak check posts again), narrow (touched nothing: still audited)
		t.Errorf("want one audit record per piiFlow call (4), got %d: %+v", n, w.audit.all())
	}
}

// TestFieldTagsOfASensitiveClassNeedViewSensitive: a dataset's field tag of a sensitive class (`c:pii=true`, as
// the projector stores a tags facet entry with a field and a value) and a tag of a class below it (`pii.email`)
// are sensitive tags like `pii` itself: shown only with VIEW_SENSITIVE, and the dataset is audited.
func TestFieldTagsOfASensitiveClassNeedViewSensitive(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	w.fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tags = ['c:pii=true', 'pii.email', 'team=crm']`, map[string]any{"k": w.out})
	q := `query($ns: String!) { dataset(namespace: $ns, name: "pub.out") { name tags { name } } }`
	if body := string(w.post(w.narrow, q, map[string]any{"ns": w.fx.NS})); strings.Contains(body, "pii") || !strings.Contains(body, "team=crm") {
		t.Errorf("narrow (no VIEW_SENSITIVE) should see team=crm and no pii tag: %s", body)
	}
	if body := string(w.post(w.narrow2, q, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, "c:pii=true") || !strings.Contains(body, "pii.email") {
		t.Errorf("narrow2 (VIEW_SENSITIVE) should see the pii tags: %s", body)
	}
	n := 0
	for _, r := range w.audit.all() {
		if len(r.Nodes) > 0 && r.Nodes[0].Key == w.out {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want the dataset audited on both reads, got %d records: %+v", n, w.audit.all())
	}
}

// TestPiiFlowArguments: a job start, an empty tag and a depth below 1 are BAD_REQUEST naming the argument; a
// depth above the cap is clamped and the answer truncated; without `from` the flow starts from the tagged fields
// of the datasets the caller may see among those the bounded scan reads (the shared test database holds far more
// than the 50,000 it reads, so the world gets a dataset whose key sorts first: its field is narrow2's one origin).
func TestPiiFlowArguments(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	first := "ds_0000000000" + testenv.Token(6)
	w.fx.Exec(`CREATE (d:Dataset {key: $k, namespace: $ns, name: 'pub.first', env: '', tags: ['id:pii'], createdAt: 0})
CREATE (n:DatasetName {ident: $ident, namespace: $ns, name: 'pub.first', env: ''})-[:NAMES {kind: 'PRIMARY', validFrom: 0, validTo: $open}]->(d)`,
		map[string]any{"k": first, "ns": w.fx.NS, "ident": graph.DatasetIdent("", w.fx.NS, "pub.first"), "open": graph.OpenEnd})
	w.fx.Field(first, "id", w.fx.T0, time.Time{})
	for q, arg := range map[string]string{
		`{ piiFlow(tag: "pii", from: {job: {namespace: "x", name: "y"}}) { tag } }`: "from",
		`{ piiFlow(tag: "pii", from: {}) { tag } }`:                                 "from",
		`{ piiFlow(tag: " ") { tag } }`:                                             "tag",
		`{ piiFlow(tag: "pii", depth: 0) { tag } }`:                                 "depth",
	} {
		body := string(w.post(w.admin, q, nil))
		if !strings.Contains(body, `"BAD_REQUEST"`) || !strings.Contains(body, arg+":") {
			t.Errorf("%s: want BAD_REQUEST naming %s: %s", q, arg, body)
		}
	}
	q := `query($ns: String!) { piiFlow(tag: "PII", depth: 50, from: {dataset: {namespace: $ns, name: "pub.mid"}}) { tag depth truncated } }`
	if body := string(w.post(w.admin, q, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, `"tag":"pii","depth":20,"truncated":true`) {
		t.Errorf("depth 50 should be clamped to 20 and truncated: %s", body)
	}
	all := w.piiFlow(w.narrow2, map[string]any{})
	if len(all.Data.PiiFlow.Origins) == 0 || all.Data.PiiFlow.Origins[0].Field.Path != "id" {
		t.Errorf("graph-wide flow for narrow2 should start from pub.first.id: %+v", all.Data.PiiFlow)
	}
	w.noLeak("graph-wide piiFlow as narrow2", w.post(w.narrow2, leakPiiFlowQ, map[string]any{}))
}
