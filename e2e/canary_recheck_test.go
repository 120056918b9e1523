package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// canaryRun is one canary test: a headwater whose scheduled canary checks never come during the test (1 h), so
// every check it sees comes after a registration or after a projection batch (ADR 0034).
type canaryRun struct {
	api, jobNS, dsNS string
}

// event is a COMPLETE run of job reading in and writing out (names in dsNS); facets, when set, go on the output.
func (c *canaryRun) event(job, in, out string, outFacets map[string]any) []byte {
	output := map[string]any{"namespace": c.dsNS, "name": out}
	if outFacets != nil {
		output["facets"] = outFacets
	}
	outputs := []any{output}
	if out == "" {
		outputs = []any{}
	}
	ev := map[string]any{"eventType": "COMPLETE", "eventTime": time.Now().UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": newUUID()}, "job": map[string]any{"namespace": c.jobNS, "name": job},
		"inputs": []any{map[string]any{"namespace": c.dsNS, "name": in}}, "outputs": outputs}
	b, _ := json.Marshal(ev)
	return b
}

// register PUTs a canary "from reaches to through job" (dataset level) as the suite's admin.
func (c *canaryRun) register(t *testing.T, name, from, to, job string) {
	t.Helper()
	body := fmt.Sprintf(`{"from": {"namespace": %q, "name": %q}, "to": {"namespace": %q, "name": %q}, "job": {"namespace": %q, "name": %q}}`,
		c.dsNS, from, c.dsNS, to, c.jobNS, job)
	req, _ := http.NewRequest(http.MethodPut, "http://"+c.api+"/api/v1/canaries/"+name, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("register canary %s: %d %s", name, resp.StatusCode, b)
	}
}

// failing returns the canaries figure of dsNS: the failing canaries' messages by name, and how many were checked.
func (c *canaryRun) failing(t *testing.T) (map[string]string, int, int) {
	t.Helper()
	cov := gql(t, c.api, token, `query($ns: String) { coverage(namespace: $ns) { canaries { numerator denominator
  items(first: 50) { nodes { name message } } } } }`, map[string]any{"ns": c.dsNS})["coverage"].(map[string]any)
	num, den, items := figureOf(cov, "canaries")
	out := map[string]string{}
	for _, it := range items {
		out[it["name"].(string)] = it["message"].(string)
	}
	return out, num, den
}

// await polls the figure until ok says it is what the step expects (at most 45 s: far below the 1 h schedule).
func (c *canaryRun) await(t *testing.T, step string, ok func(failing map[string]string, num, den int) bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		f, num, den := c.failing(t)
		if ok(f, num, den) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: canaries %d of %d, failing %v", step, num, den, f)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Canaries are re-checked after the projection batches that touch them, not only on the schedule: with the
// schedule at 1 h, a canary registered through the API is checked at once, a batch that breaks its path (the
// job's COMPLETE run no longer writes the end) shows it failing in coverage within seconds, and a canary whose
// end was renamed without anyone reporting it ("c.orders is not in the graph") is fixed by its owner registering
// the alias the way a producer does: an event whose output carries a `symlinks` facet naming c.orders.
func TestCanaryRecheckedAfterBatches(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	tok := strings.ReplaceAll(testenv.Token(5), "-", "")
	c := &canaryRun{api: freePort(t), jobNS: runID + "-canary-" + tok, dsNS: "duckdb:///tmp/" + runID + "/canary" + tok + ".duckdb"}
	start(t, kc, nil, "serve", "--http-addr="+c.api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir(),
		"--trust-canary-interval=1h", "--trust-sample-interval=1h")
	waitHTTP(t, "http://"+c.api+"/readyz", 60*time.Second)
	a, b := "warehouse.main.a", "warehouse.main.b"
	path, renamed := "path-"+tok, "renamed-"+tok
	t.Cleanup(func() {
		for _, n := range []string{path, renamed} {
			req, _ := http.NewRequest(http.MethodDelete, "http://"+c.api+"/api/v1/canaries/"+n, nil)
			if resp, err := http.DefaultClient.Do(authed(req)); err == nil {
				_ = resp.Body.Close()
			}
		}
	})

	// 1. c.j writes b from a; two canaries: a reaches b through j (passes), a reaches orders through j (orders is
	// the name the warehouse gave b; nobody reported the rename).
	waitEvents(t, store, sendAll(t, c.api, c.event("c.j", a, b, nil)), 60*time.Second)
	c.register(t, path, a, b, "c.j")
	c.register(t, renamed, a, "warehouse.main.orders", "c.j")
	c.await(t, "registered", func(f map[string]string, num, den int) bool {
		return den == 2 && num == 1 && strings.Contains(f[renamed], "warehouse.main.orders is not in the graph")
	})

	// 2. A COMPLETE run of c.j that no longer writes b closes the edge: the next batch's re-check fails the path.
	waitEvents(t, store, sendAll(t, c.api, c.event("c.j", a, "", nil)), 60*time.Second)
	c.await(t, "after the breaking batch", func(f map[string]string, num, den int) bool {
		return den == 2 && num == 0 && strings.Contains(f[path], "does not reach")
	})

	// 3. The owner writes b again and registers the alias through an event: a symlinks facet naming orders.
	alias := map[string]any{"symlinks": map[string]any{"_producer": "https://example.com/e2e",
		"_schemaURL":  "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
		"identifiers": []any{map[string]any{"namespace": c.dsNS, "name": "warehouse.main.orders", "type": "TABLE"}}}}
	waitEvents(t, store, sendAll(t, c.api, c.event("c.j", a, b, alias)), 60*time.Second)
	c.await(t, "after the alias", func(f map[string]string, num, den int) bool { return den == 2 && num == 2 })
}

// sendAll posts events with the suite's token and returns their ids.
func sendAll(t *testing.T, api string, events ...[]byte) []string {
	t.Helper()
	var ids []string
	for _, ev := range events {
		code, ans := postEvent(t, api, token, ev)
		if code != http.StatusAccepted && code != http.StatusOK {
			t.Fatalf("event refused: %d %v", code, ans)
		}
		ids = append(ids, ans["eventId"].(string))
	}
	return ids
}
