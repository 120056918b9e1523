package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/internal/testenv"
)

// gql posts a GraphQL query with a bearer token and decodes the answer.
func gqlErrs(t *testing.T, api, tok, query string, vars map[string]any) (map[string]any, []map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Data, out.Errors
}

// lineageEvent is a RunEvent with an envelope eventId, job ns/name, runId and one output (or none).
func lineageEvent(id, typ, ns, job, runID, out string, at time.Time) []byte {
	outs := "[]"
	if out != "" {
		outs = fmt.Sprintf(`[{"namespace":"s3://%s","name":%q}]`, ns, out)
	}
	return []byte(fmt.Sprintf(`{"eventId":%q,"eventType":%q,"eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":%q,"name":%q},"inputs":[],"outputs":%s}`,
		id, typ, at.UTC().Format(time.RFC3339Nano), runID, ns, job, outs))
}

// send posts one event with a token and returns the status.
func send(t *testing.T, api, tok string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const eventQuery = `query($id: ID!) { event(id: $id) { state rule reason run { runId state runIdConflict job { name } } } }`

// waitEventState polls event(id) as a principal until it leaves PENDING, and returns the status.
func waitEventState(t *testing.T, api, tok, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(projectTimeout)
	for time.Now().Before(deadline) {
		d, errs := gqlErrs(t, api, tok, eventQuery, map[string]any{"id": id})
		if len(errs) > 0 {
			t.Fatalf("event(%s): %v", id, errs)
		}
		if ev, _ := d["event"].(map[string]any); ev != nil && ev["state"] != "PENDING" {
			return ev
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("event %s still PENDING after %s", id, projectTimeout)
	return nil
}

// Issue 13 items 2 and 5 through the public API, with two producers that may each write and read only their own
// namespaces. Producer B squats the event id producer A will use next and sends a FAIL for its own job under A's
// runId. A's events are all projected; A's run keeps its job, state and history; each producer sees its own run
// flagged runIdConflict; a caller who sees both jobs must name the job. A reusing one of its ids for other content
// is 409 at the gateway that knows the id, and 202 then QUARANTINED (rule id-conflict) at one that does not.
func TestRunHijackAndEventIDSquatThroughTheAPI(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	api, api2 := freePort(t), freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	start(t, kc, nil, "serve", "--no-consumer", "--http-addr="+api2, "--http-metrics-addr="+freePort(t))
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	waitHTTP(t, "http://"+api2+"/readyz", 60*time.Second)
	nsA, nsB, run := runID+"-a", runID+"-b", uuid.NewString()
	idA1, idA2, idB := "a1-"+uuid.NewString(), "a2-"+uuid.NewString(), "b-"+uuid.NewString()
	now := time.Now().Add(-time.Minute)

	if c := send(t, api, tokenB, lineageEvent(idA2, "START", nsB, "evil", uuid.NewString(), "", now)); c != http.StatusAccepted {
		t.Fatalf("B's event under A's next id: %d", c)
	}
	if c := send(t, api, tokenA, lineageEvent(idA1, "START", nsA, "victim", run, "", now)); c != http.StatusAccepted {
		t.Fatalf("A start: %d", c)
	}
	if c := send(t, api, tokenA, lineageEvent(idA2, "COMPLETE", nsA, "victim", run, "out", now.Add(10*time.Second))); c != http.StatusAccepted {
		t.Fatalf("A complete: %d", c)
	}
	if c := send(t, api, tokenB, lineageEvent(idB, "FAIL", nsB, "evil", run, "loot", now.Add(20*time.Second))); c != http.StatusAccepted {
		t.Fatalf("B's FAIL under A's runId: %d", c)
	}
	if c := send(t, api, tokenA, lineageEvent(idA1, "ABORT", nsA, "victim", run, "", now)); c != http.StatusConflict {
		t.Fatalf("A reusing its id for other content at the gateway that knows it: want 409, got %d", c)
	}

	a2 := waitEventState(t, api, tokenA, idA2)
	ar, _ := a2["run"].(map[string]any)
	if a2["state"] != "PROJECTED" || ar == nil || ar["state"] != "COMPLETE" || ar["runId"] != run ||
		ar["job"].(map[string]any)["name"] != "victim" {
		t.Fatalf("A's event under the id B used first: %v", a2)
	}
	b := waitEventState(t, api, tokenB, idB)
	br, _ := b["run"].(map[string]any)
	if br == nil || br["state"] != "FAIL" || br["job"].(map[string]any)["name"] != "evil" || br["runIdConflict"] != true {
		t.Fatalf("B's FAIL: %v", b)
	}
	if b2 := waitEventState(t, api, tokenB, idA2); b2["run"].(map[string]any)["job"].(map[string]any)["name"] != "evil" {
		t.Fatalf("event(id) as B must answer B's own event: %v", b2)
	}
	// A's run is A's, COMPLETE, flagged for A's producer; the job still lists it.
	d, errs := gqlErrs(t, api, tokenA, `query($ns: String!, $id: ID!) { job(namespace: $ns, name: "victim") { runs { nodes { runId state } } }
		run(id: $id) { state runIdConflict job { name } events { eventId } } }`, map[string]any{"ns": nsA, "id": run})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	runs := d["job"].(map[string]any)["runs"].(map[string]any)["nodes"].([]any)
	r := d["run"].(map[string]any)
	if len(runs) != 1 || runs[0].(map[string]any)["state"] != "COMPLETE" || r["state"] != "COMPLETE" ||
		r["runIdConflict"] != true || len(r["events"].([]any)) != 2 || r["job"].(map[string]any)["name"] != "victim" {
		t.Fatalf("A's view of its run: %v", d)
	}
	// A caller who may describe both jobs must say which run it means.
	if _, errs := gqlErrs(t, api, token, `query($id: ID!) { run(id: $id) { state } }`, map[string]any{"id": run}); len(errs) == 0 ||
		errs[0]["extensions"].(map[string]any)["code"] != "BAD_REQUEST" {
		t.Fatalf("an ambiguous runId: %v", errs)
	}
	d, errs = gqlErrs(t, api, token, `query($id: ID!, $ns: String!) { run(id: $id, job: {namespace: $ns, name: "victim"}) { state } }`,
		map[string]any{"id": run, "ns": nsA})
	if len(errs) > 0 || d["run"].(map[string]any)["state"] != "COMPLETE" {
		t.Fatalf("run(id, job): %v %v", d, errs)
	}

	// A gateway that never saw the id accepts the reuse; the projector quarantines it for A to see.
	if c := send(t, api2, tokenA, lineageEvent(idA1, "ABORT", nsA, "victim", run, "", now)); c != http.StatusAccepted {
		t.Fatalf("reuse at a gateway that does not know the id: %d", c)
	}
	deadline := time.Now().Add(projectTimeout)
	for {
		ev := waitEventState(t, api, tokenA, idA1)
		if ev["state"] == "QUARANTINED" {
			if ev["rule"] != "id-conflict" || !strings.Contains(ev["reason"].(string), idA1) {
				t.Fatalf("id conflict: %v", ev)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reused id was not quarantined: %v", ev)
		}
		time.Sleep(300 * time.Millisecond)
	}
	d, _ = gqlErrs(t, api, tokenA, `query($id: ID!) { run(id: $id) { state } }`, map[string]any{"id": run})
	if d["run"].(map[string]any)["state"] != "COMPLETE" {
		t.Fatalf("the conflicting event changed the run: %v", d)
	}
}
