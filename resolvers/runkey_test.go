package resolvers

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 13 item 2, read side: two jobs, one hidden from the narrow reader, report the same runId. The narrow
// reader (no PRODUCE) finds its run by runId as if the other did not exist: runIdConflict false, nothing of the
// hidden run. The administrator (who may produce) sees the flag, and must name the run: by node id, by job, or
// get BAD_REQUEST for the bare runId and for an id issued before projection version 2.
func TestRunIDSharedByTwoJobs(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	fx := w.fx
	hiddenName := w.hidden("jr")
	j, jh := fx.Job("pub.jr"), fx.Job(hiddenName)
	run := "00000000-0000-4000-8000-" + testenv.Token(6)
	kv, kh := graph.RunKey(run, j), graph.RunKey(run, jh)
	w.secretKey(kh, api.RunID(kh))
	fx.Run(kv, j, nil, nil, "", "START", "COMPLETE")
	fx.Run(kh, jh, nil, nil, "", "START", "FAIL")
	fx.Exec(`MATCH (r:Run) WHERE r.key IN $keys SET r.runId = $id`, map[string]any{"keys": []any{kv, kh}, "id": run})
	q := `query($id: ID!, $job: JobRef) { run(id: $id, job: $job) { id runId state runIdConflict job { name } } }`
	type answer struct {
		Data struct {
			Run *struct {
				ID, RunID, State string
				RunIDConflict    bool
			}
		}
		Errors []gqlError
	}
	ask := func(who, id string, job map[string]any) answer {
		body := w.post(who, q, map[string]any{"id": id, "job": job})
		if who == w.narrow {
			w.noLeak("run by runId", body)
		}
		var a answer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	oldID := base64.RawURLEncoding.EncodeToString([]byte("R:" + run)) // issued by projection version 1
	for _, id := range []string{run, oldID, api.RunID(kv)} {
		a := ask(w.narrow, id, nil)
		if a.Data.Run == nil || a.Data.Run.State != "COMPLETE" || a.Data.Run.RunIDConflict || a.Data.Run.RunID != run ||
			a.Data.Run.ID != api.RunID(kv) {
			t.Fatalf("narrow reader, id %s: %+v", id, a)
		}
	}
	if a := ask(w.admin, api.RunID(kv), nil); a.Data.Run == nil || !a.Data.Run.RunIDConflict {
		t.Fatalf("a producer of the job must see the conflict: %+v", a)
	}
	for _, id := range []string{run, oldID} {
		a := ask(w.admin, id, nil)
		if len(a.Errors) == 0 || a.Errors[0].Extensions["code"] != "BAD_REQUEST" || !strings.Contains(a.Errors[0].Message, run) {
			t.Fatalf("a runId of two visible jobs must be BAD_REQUEST naming it: %+v", a)
		}
	}
	a := ask(w.admin, run, map[string]any{"namespace": fx.NS, "name": hiddenName})
	if a.Data.Run == nil || a.Data.Run.State != "FAIL" || a.Data.Run.ID != api.RunID(kh) {
		t.Fatalf("run(id, job): %+v", a)
	}
}
