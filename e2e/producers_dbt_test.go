package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// dbt-ol (openlineage-dbt) runs the project in testdata/producers/dbt on DuckDB with an absolute database path
// and sends to Headwater over the HTTP transport with an API key: a `build` after `docs generate` (typed schemas),
// a `run --consume-structured-logs` of stg_orders, a `run` of every model, then a `run` whose customer_totals
// model fails. The whole answer is compared with testdata/producers/dbt.golden.
func TestProducerDbt(t *testing.T) {
	home := producerHome(t, "HEADWATER_TEST_DBT", "scripts/producers/dbt.sh")
	p := newProducerRun(t, "dbt")
	proj := filepath.Join(p.work, "project")
	src, _ := filepath.Abs("testdata/producers/dbt")
	copyTree(t, src, proj)
	events := filepath.Join(p.work, "events.jsonl")
	olConfig := filepath.Join(p.work, "openlineage.yml")
	// The exact configuration docs/producers/dbt.md documents: HTTP with an API key (plus a file copy the test
	// reads back to know which events to wait for).
	cfg := fmt.Sprintf(`transport:
  type: composite
  continue_on_failure: false
  transports:
    headwater:
      type: http
      url: %s
      endpoint: api/v1/lineage
      auth:
        type: api_key
        apiKey: %s
    copy:
      type: file
      log_file_path: %s
      append: true
`, p.url(), token, events)
	if err := os.WriteFile(olConfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "venv", "bin")
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "DBT_PROFILES_DIR=" + proj,
		"HW_DBT_PATH=" + filepath.Join(p.work, "warehouse.duckdb"), "HW_DBT_TARGET=" + filepath.Join(p.work, "target"),
		"OPENLINEAGE_CONFIG=" + olConfig, "OPENLINEAGE_NAMESPACE=" + p.jobNS, "DBT_SEND_ANONYMOUS_USAGE_STATS=false"}
	dbt, dbtOL := filepath.Join(bin, "dbt"), filepath.Join(bin, "dbt-ol")
	p.run(t, proj, env, 0, dbt, "seed", "-q")
	p.run(t, proj, env, 0, dbt, "run", "-q")
	p.run(t, proj, env, 0, dbt, "docs", "generate", "-q")
	p.run(t, proj, env, 0, dbtOL, "build")
	p.run(t, proj, env, 0, dbtOL, "run", "--consume-structured-logs", "--select", "stg_orders")
	p.run(t, proj, env, 0, dbtOL, "run")
	p.run(t, proj, env, 1, dbtOL, "run", "--select", "customer_totals", "--vars", "{hw_fail: true}")

	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	a := p.answer(t)
	assertOneJobPerDbtModel(t, a)
	// Issue 14 item 3: dbt-ol leaves the seed raw_customers out of stg_customers' inputs while its column lineage
	// names it; the dataset edge raw_customers -> stg_customers is derived from the column lineage, and its evidence
	// says so (source columnLineage).
	compareGolden(t, "dbt", a.build())
}

// Issue 14 item 5 (ADR 0027): dbt-ol names a model's job differently per command (`run`:
// warehouse.main.<project>.<model>, `build`: ... + ".build.run", structured logs: the unique_id). Each model is one
// job, found under each of those names and by its unique_id, with the runs of every command.
func assertOneJobPerDbtModel(t *testing.T, a *answer) {
	t.Helper()
	// what every client could ask before ADR 0027, then the fields it added
	const byName = `query($ns: String!, $n: String!) { job(namespace: $ns, name: $n) { id runs(first: 50) { nodes { runId } } } }`
	const q = `query($ns: String!, $n: String!, $u: String!) {
		byName: job(namespace: $ns, name: $n) { id dbtUniqueId dbtRole names }
		byId: dbtJob(namespace: $ns, uniqueId: $u) { id name } }`
	const testsQ = `query($ns: String!, $u: String!) { dbtJob(namespace: $ns, uniqueId: $u, role: TESTS) { id name jobType } }`
	for model, structured := range map[string]bool{"stg_orders": true, "stg_customers": false, "customer_totals": false} {
		uid := "model.hw_producers." + model
		names := []string{"warehouse.main.hw_producers." + model, "warehouse.main.hw_producers." + model + ".build.run"}
		if structured {
			names = append(names, uid)
		}
		sort.Strings(names)
		var id any
		for _, n := range names {
			j, _ := a.gql(byName, map[string]any{"ns": a.p.jobNS, "n": n})["job"].(map[string]any)
			if j == nil {
				t.Fatalf("job %s: not found", n)
			}
			if id == nil {
				id = j["id"]
			}
			if j["id"] != id {
				t.Fatalf("%s: job %s is %v, another name of it is %v: two jobs for one model", model, n, j["id"], id)
			}
			// build, run, the failing run of customer_totals, the structured-logs run of stg_orders
			want := 2
			if model == "customer_totals" || structured {
				want = 3
			}
			if runs := j["runs"].(map[string]any)["nodes"].([]any); len(runs) != want {
				t.Fatalf("%s: %d runs under job %s, want %d (one per command)", model, len(runs), n, want)
			}
			d := a.gql(q, map[string]any{"ns": a.p.jobNS, "n": n, "u": uid})
			j = d["byName"].(map[string]any)
			if got := fmt.Sprint(j["names"]); got != fmt.Sprint(names) || j["dbtUniqueId"] != uid || j["dbtRole"] != "NODE" {
				t.Fatalf("%s: job %s names=%s dbtUniqueId=%v dbtRole=%v, want names %v", model, n, got, j["dbtUniqueId"],
					j["dbtRole"], names)
			}
			if by, _ := d["byId"].(map[string]any); by == nil || by["id"] != id {
				t.Fatalf("%s: dbtJob(%s) = %v, want job %v", model, uid, d["byId"], id)
			}
			// the model's per-model test job (build ran the generic tests of stg_*): another job, NOT_FOUND otherwise
			data, errs := (&ownTest{api: a.p.api}).gqlErrs(t, testsQ, map[string]any{"ns": a.p.jobNS, "u": uid})
			tests, _ := data["dbtJob"].(map[string]any)
			if model == "customer_totals" {
				if tests != nil || len(errs) != 1 || !strings.Contains(fmt.Sprint(errs), "NOT_FOUND") {
					t.Fatalf("%s has no tests, dbtJob(role: TESTS) = %v %v", model, tests, errs)
				}
			} else if len(errs) > 0 || tests == nil || tests["id"] == id || tests["jobType"] != "TEST" ||
				tests["name"] != "warehouse.main.hw_producers."+model+".build.test" {
				t.Fatalf("%s: its TESTS job %v %v", model, tests, errs)
			}
		}
	}
}
