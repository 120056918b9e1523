package resolvers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// ADR 0027 read side: a dbt node's job is found by each name it was reported under, by its unique_id (dbtJob), and
// its runs by runId under any of its names; a hidden one answers exactly like a missing one; a facet-less job of
// the same name comes first; a name two dbt node jobs were reported under is BAD_REQUEST, never one of them.
func TestDbtJobLookups(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	fx := w.fx
	dbtJob := func(uid, role, name string, names ...string) string {
		k := graph.DbtJobKey(fx.NS, uid, role)
		fx.Exec(`MERGE (j:Job {key: $k}) SET j.namespace = $ns, j.name = $name, j.names = $names, j.dbtUniqueId = $uid,
			j.dbtRole = $role, j.jobType = 'MODEL'`, map[string]any{"k": k, "ns": fx.NS, "name": name, "names": names,
			"uid": uid, "role": role})
		return k
	}
	model := dbtJob("model.p.orders", graph.DbtRoleNode, "pub.orders", "model.p.orders", "pub.orders", "pub.orders.build.run")
	tests := dbtJob("model.p.orders", graph.DbtRoleTests, "pub.orders.build.test", "pub.orders.build.test")
	hiddenName := w.hidden("dbt")
	hidden := dbtJob("model.p.secret", graph.DbtRoleNode, hiddenName, hiddenName)
	w.secretKey(hidden, api.JobID(hidden))
	run := "00000000-0000-4000-8000-" + testenv.Token(6)
	rk := graph.RunKey(run, graph.JobKey(fx.NS, "pub.orders.build.run")) // keyed by the name it was reported under
	fx.Run(rk, model, nil, nil, "", "START", "COMPLETE")
	fx.Exec(`MATCH (r:Run {key: $k}) SET r.runId = $id`, map[string]any{"k": rk, "id": run})
	plain := fx.Job("pub.shared") // reported without the facet
	dbtJob("model.p.shared", graph.DbtRoleNode, "pub.shared.build.run", "pub.shared", "pub.shared.build.run")
	dbtJob("model.p.a", graph.DbtRoleNode, "pub.a", "pub.a", "pub.twice")
	dbtJob("model.p.b", graph.DbtRoleNode, "pub.b", "pub.b", "pub.twice")
	// pub.half: reported for a visible dbt node and for a hidden one
	hiddenUID, hiddenName2 := "model.p.sec"+testenv.Token(6), w.hidden("dbt")
	w.secrets = append(w.secrets, hiddenUID)
	half := dbtJob("model.p.d", graph.DbtRoleNode, "pub.d", "pub.d", "pub.half")
	dbtJob(hiddenUID, graph.DbtRoleNode, hiddenName2, hiddenName2, "pub.half")

	type job struct {
		ID, Name, DbtUniqueID, DbtRole string
		Names                          []string
	}
	type answer struct {
		Data struct {
			Job, DbtJob *job
			Run         *struct{ ID, RunID string }
		}
		Errors []gqlError
	}
	ask := func(who, q string, vars map[string]any) answer {
		t.Helper()
		body := w.post(who, q, vars)
		if who == w.narrow {
			w.noLeak("dbt job lookups", body)
		}
		var a answer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	const byName = `query($ns: String!, $n: String!) { job(namespace: $ns, name: $n) { id name dbtUniqueId dbtRole names } }`
	const byID = `query($ns: String!, $u: String!, $r: DbtRole) { dbtJob(namespace: $ns, uniqueId: $u, role: $r) {
		id name dbtUniqueId dbtRole names } }`
	for _, n := range []string{"pub.orders", "pub.orders.build.run", "model.p.orders"} {
		a := ask(w.narrow, byName, map[string]any{"ns": fx.NS, "n": n})
		if j := a.Data.Job; j == nil || j.ID != api.JobID(model) || j.Name != "pub.orders" || j.DbtUniqueID != "model.p.orders" ||
			j.DbtRole != "NODE" || strings.Join(j.Names, ",") != "model.p.orders,pub.orders,pub.orders.build.run" {
			t.Fatalf("job(%s): %+v", n, a)
		}
	}
	if a := ask(w.narrow, byID, map[string]any{"ns": fx.NS, "u": "model.p.orders"}); a.Data.DbtJob == nil || a.Data.DbtJob.ID != api.JobID(model) {
		t.Fatalf("dbtJob(model.p.orders): %+v", a)
	}
	if a := ask(w.narrow, byID, map[string]any{"ns": fx.NS, "u": "model.p.orders", "r": "TESTS"}); a.Data.DbtJob == nil ||
		a.Data.DbtJob.ID != api.JobID(tests) || a.Data.DbtJob.DbtRole != "TESTS" {
		t.Fatalf("dbtJob(model.p.orders, TESTS): %+v", a)
	}
	// hidden and missing answer alike (but for the id asked)
	hiddenA := ask(w.narrow, byID, map[string]any{"ns": fx.NS, "u": "model.p.secret"})
	missingA := ask(w.narrow, byID, map[string]any{"ns": fx.NS, "u": "model.p.nothing"})
	if hiddenA.Data.DbtJob != nil || len(hiddenA.Errors) != 1 || len(missingA.Errors) != 1 ||
		hiddenA.Errors[0].Extensions["code"] != "NOT_FOUND" ||
		strings.ReplaceAll(hiddenA.Errors[0].Message, "secret", "nothing") != missingA.Errors[0].Message {
		t.Fatalf("hidden %+v, missing %+v", hiddenA, missingA)
	}
	if a := ask(w.admin, byID, map[string]any{"ns": fx.NS, "u": "model.p.secret"}); a.Data.DbtJob == nil || a.Data.DbtJob.ID != api.JobID(hidden) {
		t.Fatalf("admin dbtJob(model.p.secret): %+v", a)
	}
	// the run, asked by runId and any of the job's names
	for _, n := range []string{"pub.orders", "model.p.orders"} {
		a := ask(w.narrow, `query($id: ID!, $job: JobRef) { run(id: $id, job: $job) { id runId } }`,
			map[string]any{"id": run, "job": map[string]any{"namespace": fx.NS, "name": n}})
		if a.Data.Run == nil || a.Data.Run.ID != api.RunID(rk) {
			t.Fatalf("run(%s, job %s): %+v", run, n, a)
		}
	}
	if a := ask(w.narrow, byName, map[string]any{"ns": fx.NS, "n": "pub.shared"}); a.Data.Job == nil || a.Data.Job.ID != api.JobID(plain) ||
		a.Data.Job.DbtUniqueID != "" || strings.Join(a.Data.Job.Names, ",") != "pub.shared" {
		t.Fatalf("job(pub.shared) must be the facet-less job: %+v", a)
	}
	a := ask(w.narrow, byName, map[string]any{"ns": fx.NS, "n": "pub.twice"})
	if a.Data.Job != nil || len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != "BAD_REQUEST" ||
		!strings.Contains(a.Errors[0].Message, "dbtJob") || !strings.Contains(a.Errors[0].Message, "model.p.b") {
		t.Fatalf("a name of two dbt node jobs: %+v", a)
	}
	// the narrow reader sees one of pub.half's jobs: that one, and nothing of the other; the admin sees both
	if a := ask(w.narrow, byName, map[string]any{"ns": fx.NS, "n": "pub.half"}); a.Data.Job == nil || a.Data.Job.ID != api.JobID(half) {
		t.Fatalf("narrow job(pub.half): %+v", a)
	}
	if a := ask(w.admin, byName, map[string]any{"ns": fx.NS, "n": "pub.half"}); a.Data.Job != nil || len(a.Errors) != 1 ||
		a.Errors[0].Extensions["code"] != "BAD_REQUEST" || !strings.Contains(a.Errors[0].Message, hiddenUID) {
		t.Fatalf("admin job(pub.half): %+v", a)
	}
}
