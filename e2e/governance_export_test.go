package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/governance/flowexport"
)

// getFlowCSV gets the flow export as tok ("" sends no Authorization).
func (w *piiWorld) getFlowCSV(t *testing.T, tok string, q url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+w.api+flowexport.PathCSV+"?"+q.Encode(), nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// exportAndExplain: through the served binary, the flow export needs a token (401 without), answers the admin
// with the fixed header and final.email reached over three steps, and the narrow reader with nothing behind the
// namespace it may not see; final's effective tags explain pii derived from customers.email at +10m, and none at
// +25m (both copies closed).
func (w *piiWorld) exportAndExplain(t *testing.T) {
	t.Helper()
	q := url.Values{"tag": {"pii"}, "namespace": {w.sc.dsNS}, "name": {"customers"}, "field": {"email"},
		"asOf": {w.t0.Add(10 * time.Minute).UTC().Format(time.RFC3339Nano)}}
	if code, body := w.getFlowCSV(t, "", q); code != http.StatusUnauthorized {
		t.Errorf("flow.csv without a token: want 401, got %d %s", code, body)
	}
	code, body := w.getFlowCSV(t, token, q)
	if code != http.StatusOK || !strings.HasPrefix(body, strings.Join(flowexport.Header, ",")+"\n") ||
		!strings.Contains(body, "REACHED,"+w.sc.dsNS+",final,email,,CARRIED,3,"+w.sc.dsNS+",customers,email,IDENTITY > IDENTITY > IDENTITY") {
		t.Errorf("admin flow.csv: %d\n%s", code, body)
	}
	code, body = w.getFlowCSV(t, w.narrow, q)
	if code != http.StatusOK || strings.Contains(body, w.secNS) || strings.Contains(body, "secret_copy") || strings.Contains(body, "behind") ||
		!strings.Contains(body, ",final,email,") {
		t.Errorf("narrow flow.csv: %d\n%s", code, body)
	}
	eq := `query($ns: String!, $asOf: Time) { dataset(namespace: $ns, name: "final") { effectiveTags(asOf: $asOf) {
  tags { field { path } source class distance origin { path dataset { name } } explanation } } } }`
	for at, want := range map[time.Duration]string{10 * time.Minute: "email DERIVED pii 3 customers.email", 25 * time.Minute: ""} {
		d, errs := gqlErrs(t, w.api, token, eq, map[string]any{"ns": w.sc.dsNS, "asOf": w.t0.Add(at).UTC().Format(time.RFC3339Nano)})
		if len(errs) > 0 {
			t.Fatalf("effectiveTags: %v", errs)
		}
		raw, _ := json.Marshal(d)
		var a struct {
			Dataset struct {
				EffectiveTags struct {
					Tags []struct {
						Field    struct{ Path string }
						Source   string
						Class    string
						Distance int
						Origin   struct {
							Path    string
							Dataset struct{ Name string }
						}
					}
				}
			}
		}
		_ = json.Unmarshal(raw, &a)
		var got []string
		for _, tg := range a.Dataset.EffectiveTags.Tags {
			got = append(got, fmt.Sprintf("%s %s %s %d %s.%s", tg.Field.Path, tg.Source, tg.Class, tg.Distance, tg.Origin.Dataset.Name, tg.Origin.Path))
		}
		if strings.Join(got, "; ") != want {
			t.Errorf("final's effective tags at +%v: got %q, want %q\n%s", at, strings.Join(got, "; "), want, raw)
		}
	}
}
