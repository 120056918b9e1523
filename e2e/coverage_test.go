package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// trustRun is one coverage test: a headwater with short trust thresholds, the dbt job namespace the reader
// may describe, a dataset namespace, and a namespace the reader may not see.
type trustRun struct {
	api, metrics, jobNS, dsNS, hiddenNS, project string
	store                                        *graph.Store
}

// manifest is a dbt manifest of n table models (model.<project>.m1..mn, m1..m5 criticality high), as dbt
// writes target/manifest.json (the fields the reader uses).
func (r *trustRun) manifest(n int, skip ...int) []byte {
	nodes := map[string]any{}
	for i := 1; i <= n; i++ {
		if slices.Contains(skip, i) {
			continue
		}
		crit := "low"
		if i <= 5 {
			crit = "high"
		}
		id := fmt.Sprintf("model.%s.m%d", r.project, i)
		nodes[id] = map[string]any{"unique_id": id, "resource_type": "model", "name": fmt.Sprintf("m%d", i),
			"package_name": r.project, "database": "warehouse", "schema": "main", "alias": fmt.Sprintf("m%d", i),
			"relation_name": fmt.Sprintf(`"warehouse"."main"."m%d"`, i), "tags": []string{}, "meta": map[string]any{"criticality": crit},
			"depends_on": map[string]any{"nodes": []string{}, "macros": []string{}}, "config": map[string]any{"materialized": "table", "enabled": true}}
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
		"project_name": r.project, "adapter_type": "duckdb"}, "nodes": nodes, "sources": map[string]any{}})
	return b
}

// register uploads a manifest gzip-compressed with tok and returns the status and the answer.
func (r *trustRun) register(t *testing.T, tok, source string, manifest []byte) (int, map[string]any) {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(manifest)
	_ = zw.Close()
	url := fmt.Sprintf("http://%s/api/v1/inventory/%s?kind=dbt&jobNamespace=%s&datasetNamespace=%s&schedule=@daily",
		r.api, source, r.jobNS, r.dsNS)
	req, _ := http.NewRequest(http.MethodPost, url, &gz)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// dbtEvent is a run event as dbt-ol sends it for model m (job name per its rule for the command).
func (r *trustRun) dbtEvent(m int, jobName, runID, typ string) []byte {
	ev := map[string]any{"eventType": typ, "eventTime": time.Now().UTC().Format(time.RFC3339Nano),
		"producer":  "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
		"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run":       map[string]any{"runId": runID},
		"job": map[string]any{"namespace": r.jobNS, "name": jobName, "facets": map[string]any{
			"jobType": map[string]any{"_producer": "https://x", "_schemaURL": "https://x", "processingType": "BATCH", "integration": "DBT", "jobType": "MODEL"},
			"dbt_node": map[string]any{"_producer": "https://x", "_schemaURL": "https://x",
				"unique_id": fmt.Sprintf("model.%s.m%d", r.project, m), "database": "warehouse", "schema": "main"}}},
		"inputs":  []any{},
		"outputs": []any{map[string]any{"namespace": r.dsNS, "name": fmt.Sprintf("warehouse.main.m%d", m)}},
	}
	b, _ := json.Marshal(ev)
	return b
}

func (r *trustRun) send(t *testing.T, tok string, events ...[]byte) []string {
	t.Helper()
	var ids []string
	for _, ev := range events {
		code, ans := postEvent(t, r.api, tok, ev)
		if code != http.StatusAccepted && code != http.StatusOK {
			t.Fatalf("event refused: %d %v", code, ans)
		}
		ids = append(ids, ans["eventId"].(string))
	}
	return ids
}

const coverageQ = `query($ns: String, $crit: String, $producer: String) {
  coverage(namespace: $ns, criticality: $crit, producer: $producer) { permissionsFiltered window
    jobsReporting { numerator denominator ratio label groups { dimension key numerator denominator }
      items(first: 50) { totalCount nodes { kind nodes name status criticality source message } } }
    jobsInstrumented { numerator denominator items(first: 50) { nodes { name status } } }
    runsWithoutTerminal { numerator denominator items(first: 200) { nodes { kind nodes name status message } } }
    quietProducers { numerator denominator items { nodes { producer message } } }
    rejectedEvents { numerator denominator items { nodes { producer reason count } } }
    unresolvedIdentities { numerator items { nodes { namespace name } } }
    edgeFreshness { numerator denominator items(first: 200) { nodes { namespace name } } }
    columnLineage { numerator denominator items(first: 200) { nodes { namespace name } } } } }`

func (r *trustRun) coverage(t *testing.T, tok string, vars map[string]any) map[string]any {
	t.Helper()
	return gql(t, r.api, tok, coverageQ, vars)["coverage"].(map[string]any)
}

func figureOf(cov map[string]any, name string) (num, den int, items []map[string]any) {
	f := cov[name].(map[string]any)
	for _, n := range f["items"].(map[string]any)["nodes"].([]any) {
		items = append(items, n.(map[string]any))
	}
	return int(f["numerator"].(float64)), int(f["denominator"].(float64)), items
}

func names(items []map[string]any, key string) []string {
	var out []string
	for _, it := range items {
		if s, ok := it[key].(string); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// expectedDump renders the stored registration of a source and its expected jobs.
func expectedDump(t *testing.T, store *graph.Store, source string) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (n) WHERE (n:InventorySource AND n.key = $s)
  OR (n:ExpectedJob AND n.source = $s) RETURN properties(n) AS p ORDER BY p.key`, map[string]any{"s": source},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, rec := range res.Records {
		p, _ := rec.Get("p")
		j, _ := json.Marshal(p)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCoverageAgainstADbtManifest registers a 10-model dbt manifest (with the CLI, then over HTTP), lets 7 of the
// models report the way dbt-ol names them, and checks the signals through GraphQL: coverage 70 % with the 3
// named, re-registering twice changes nothing, a model removed from the manifest is retired (not missing), a run
// with only a START past the grace period, a producer silent past its threshold and back, metrics, and that a
// narrow principal's coverage counts and names nothing it may not see.
func TestCoverageAgainstADbtManifest(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	r := &trustRun{api: freePort(t), metrics: freePort(t), jobNS: runID + "-readable", dsNS: "duckdb:///tmp/" + runID + "/warehouse.duckdb",
		hiddenNS: runID + "-trust-hidden", project: "p" + strings.ReplaceAll(testenv.Token(5), "-", ""), store: store}
	quietProducer := runID + "-producer-a"
	start(t, kc, nil, "serve", "--http-addr="+r.api, "--http-metrics-addr="+r.metrics, "--archive-dir="+t.TempDir(),
		"--trust-run-grace=2s", "--trust-quiet-min=10s", "--trust-quiet-factors="+quietProducer+"=0.01",
		"--trust-sample-interval=1h")
	waitHTTP(t, "http://"+r.api+"/readyz", 60*time.Second)
	source := "dbt-" + r.project

	// 1. Register with the CLI (gzip, streamed), then report 7 of 10: five under `dbt-ol build` names, two under
	// `dbt-ol run` names.
	file := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(file, r.manifest(10), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "inventory", "register", "--url=http://"+r.api, "--token="+token, "--source="+source,
		"--kind=dbt", "--file="+file, "--job-namespace="+r.jobNS, "--dataset-namespace="+r.dsNS, "--schedule=@daily").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"added":10`) {
		t.Fatalf("headwater inventory register: %v\n%s", err, out)
	}
	var events [][]byte
	for m := 1; m <= 7; m++ {
		name := fmt.Sprintf("warehouse.main.%s.m%d.build.run", r.project, m)
		if m > 5 {
			name = fmt.Sprintf("warehouse.main.%s.m%d", r.project, m)
		}
		run := newUUID()
		events = append(events, r.dbtEvent(m, name, run, "START"), r.dbtEvent(m, name, run, "COMPLETE"))
	}
	openRun := newUUID()
	events = append(events, r.dbtEvent(1, fmt.Sprintf("warehouse.main.%s.m1.build.run", r.project), openRun, "START"))
	waitEvents(t, store, r.send(t, token, events...), 60*time.Second)

	cov := r.coverage(t, token, map[string]any{"ns": r.jobNS})
	num, den, items := figureOf(cov, "jobsReporting")
	missing := []string{"warehouse.main." + r.project + ".m10", "warehouse.main." + r.project + ".m8", "warehouse.main." + r.project + ".m9"}
	if num != 7 || den != 10 || !slices.Equal(names(items, "name"), missing) {
		t.Fatalf("jobsReporting %d/%d %v, want 7/10 with %v", num, den, names(items, "name"), missing)
	}
	if jr := cov["jobsReporting"].(map[string]any); jr["ratio"].(float64) != 0.7 || jr["label"] != "7 of 10 expected jobs reporting" {
		t.Fatalf("jobsReporting ratio and label: %v %v", jr["ratio"], jr["label"])
	}
	for _, it := range items {
		if it["status"] != "NEVER_REPORTED" || it["criticality"] != "low" || !strings.Contains(it["message"].(string), "has never reported") {
			t.Errorf("missing model item: %v", it)
		}
	}
	if high, _, _ := figureOf(r.coverage(t, token, map[string]any{"ns": r.jobNS, "crit": "HIGH"}), "jobsReporting"); high != 5 {
		t.Errorf("criticality high: %d reporting, want 5", high)
	}

	// 2. Re-registering the same manifest (twice, over HTTP) changes nothing.
	before := expectedDump(t, store, source)
	for i := range 2 {
		code, ans := r.register(t, token, source, r.manifest(10))
		if code != 200 || ans["unchanged"] != true {
			t.Fatalf("re-registration %d: %d %v", i, code, ans)
		}
		if after := expectedDump(t, store, source); after != before {
			t.Fatalf("re-registration %d changed the store:\n%s\nwas\n%s", i, after, before)
		}
	}

	// 3. m10 removed from the manifest: retired, not missing.
	if code, ans := r.register(t, token, source, r.manifest(10, 10)); code != 200 || ans["retired"].(float64) != 1 {
		t.Fatalf("m10 removed: %d %v", code, ans)
	}
	cov = r.coverage(t, token, map[string]any{"ns": r.jobNS})
	if num, den, items := figureOf(cov, "jobsReporting"); num != 7 || den != 9 || len(items) != 2 {
		t.Fatalf("after retiring m10: %d/%d %v, want 7/9 with m8 and m9", num, den, names(items, "name"))
	}

	// 4. The run with only a START, once past the grace period (2 s).
	time.Sleep(2500 * time.Millisecond)
	cov = r.coverage(t, token, map[string]any{"ns": r.jobNS})
	_, started, runs := figureOf(cov, "runsWithoutTerminal")
	if started < 8 || !slices.ContainsFunc(runs, func(it map[string]any) bool { return strings.Contains(it["message"].(string), openRun) }) {
		t.Fatalf("runsWithoutTerminal of %d runs: %v, want the run %s", started, runs, openRun)
	}

	// 5. A producer silent past its threshold (10 s here), then back.
	r.quietAndBack(t, quietProducer)

	// 6. A narrow principal: DESCRIBE on the job namespace only. A second source in a namespace it may not see.
	r.narrowSeesNothingHidden(t)

	// 7. Metrics: the sampler sets a gauge per signal.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(get(t, "http://"+r.metrics+"/metrics"), `headwater_trust_denominator{signal="jobs_reporting"}`) {
		if time.Now().After(deadline) {
			t.Fatal("no headwater_trust_denominator gauge after 90 s")
		}
		time.Sleep(time.Second)
	}
}

func (r *trustRun) quietAndBack(t *testing.T, producer string) {
	t.Helper()
	ev := func() []byte {
		b, _ := json.Marshal(map[string]any{"eventType": "COMPLETE", "eventTime": time.Now().UTC().Format(time.RFC3339Nano),
			"producer": "https://test/quiet", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
			"run": map[string]any{"runId": newUUID()}, "job": map[string]any{"namespace": runID + "-a", "name": "quiet-job"},
			"inputs": []any{}, "outputs": []any{}})
		return b
	}
	quiet := func() int {
		num, den, _ := figureOf(r.coverage(t, token, map[string]any{"producer": producer}), "quietProducers")
		if den != 1 {
			t.Fatalf("quietProducers for %s: denominator %d, want 1", producer, den)
		}
		return num
	}
	sent := time.Now()
	waitEvents(t, r.store, r.send(t, tokenA, ev()), 60*time.Second)
	if q := quiet(); q != 0 && time.Since(sent) < 10*time.Second {
		t.Fatalf("quiet %d right after an event", q)
	}
	time.Sleep(time.Until(sent.Add(12 * time.Second)))
	if q := quiet(); q != 1 {
		t.Fatalf("quiet %d after 12 s of silence, want 1", q)
	}
	waitEvents(t, r.store, r.send(t, tokenA, ev()), 60*time.Second)
	if q := quiet(); q != 0 {
		t.Fatalf("quiet %d after the producer is back, want 0", q)
	}
}

func (r *trustRun) narrowSeesNothingHidden(t *testing.T) {
	t.Helper()
	hidden := "hidden-" + r.project
	list := fmt.Sprintf("namespace,name,schedule\n%s,secret_job_%s,@hourly\n", r.hiddenNS, r.project)
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.api+"/api/v1/inventory/"+hidden+"?kind=list", strings.NewReader(list))
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("register the hidden source: %v %v", err, resp.Status)
	}
	resp.Body.Close()
	all := r.coverage(t, readerToken, map[string]any{})
	body, _ := json.Marshal(all)
	for _, secret := range []string{r.hiddenNS, "secret_job", hidden} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the reader's coverage names %q:\n%s", secret, body)
		}
	}
	if all["permissionsFiltered"] != true {
		t.Error("the reader's coverage must say permissionsFiltered")
	}
	if num, den, _ := figureOf(all, "jobsReporting"); num != 7 || den != 9 {
		t.Errorf("the reader counts %d/%d expected jobs, want exactly its 7/9", num, den)
	}
	if _, den, _ := figureOf(all, "quietProducers"); den != 0 {
		t.Errorf("the reader sees %d producers, want none (it sends nothing)", den)
	}
	if num, den, items := figureOf(r.coverage(t, readerToken, map[string]any{"ns": r.hiddenNS}), "jobsInstrumented"); num+den+len(items) != 0 {
		t.Errorf("the hidden namespace: %d/%d %v, want nothing", num, den, items)
	}
	if _, den, _ := figureOf(r.coverage(t, token, map[string]any{"ns": r.hiddenNS}), "jobsInstrumented"); den != 1 {
		t.Errorf("the admin counts %d jobs in the hidden namespace, want 1 (the test would be vacuous)", den)
	}
	data := gql(t, r.api, readerToken, `{ inventorySources { source } }`, nil)
	if srcs := data["inventorySources"].([]any); len(srcs) != 0 {
		t.Errorf("the reader lists sources: %v", srcs)
	}
	if _, errs := gqlErrs(t, r.api, readerToken, `mutation($s: String!) { retireInventory(source: $s) }`, map[string]any{"s": hidden}); len(errs) == 0 ||
		errs[0]["extensions"].(map[string]any)["code"] != "FORBIDDEN" {
		t.Errorf("the reader retired a source: %v", errs)
	}
	if code, _ := r.register(t, readerToken, "dbt-"+r.project, r.manifest(3)); code != http.StatusForbidden {
		t.Errorf("the reader registered an inventory: %d", code)
	}
}

// TestCoverageRealDbtManifest registers the manifest `dbt parse` writes for the e2e dbt project, then runs
// `dbt-ol build`: every expected job (3 models, 4 tests) matches what dbt-ol reported, by its naming rules (and,
// with ADR 0027, by the dbt_node facet's unique id).
func TestCoverageRealDbtManifest(t *testing.T) {
	home := producerHome(t, "HEADWATER_TEST_DBT", "scripts/producers/dbt.sh")
	p := newProducerRun(t, "dbtcov")
	proj := filepath.Join(p.work, "project")
	src, _ := filepath.Abs("testdata/producers/dbt")
	copyTree(t, src, proj)
	events := filepath.Join(p.work, "events.jsonl")
	olConfig := filepath.Join(p.work, "openlineage.yml")
	cfg := fmt.Sprintf("transport:\n  type: composite\n  continue_on_failure: false\n  transports:\n    headwater:\n      type: http\n      url: %s\n      endpoint: api/v1/lineage\n      auth:\n        type: api_key\n        apiKey: %s\n    copy:\n      type: file\n      log_file_path: %s\n      append: true\n",
		p.url(), token, events)
	if err := os.WriteFile(olConfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "venv", "bin")
	db := filepath.Join(p.work, "warehouse.duckdb")
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "DBT_PROFILES_DIR=" + proj, "HW_DBT_PATH=" + db,
		"HW_DBT_TARGET=" + filepath.Join(p.work, "target"), "OPENLINEAGE_CONFIG=" + olConfig,
		"OPENLINEAGE_NAMESPACE=" + p.jobNS, "DBT_SEND_ANONYMOUS_USAGE_STATS=false"}
	p.run(t, proj, env, 0, filepath.Join(bin, "dbt"), "parse", "-q")
	manifest, err := os.ReadFile(filepath.Join(p.work, "target", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &trustRun{api: p.api, jobNS: p.jobNS, dsNS: "duckdb://" + db, store: p.store}
	for i, want := range []string{"added", "unchanged"} {
		code, ans := r.register(t, token, "dbt-"+p.jobNS, manifest)
		if code != 200 || (i == 0 && ans["added"].(float64) != 7) || (i == 1 && ans["unchanged"] != true) {
			t.Fatalf("registration %d (%s): %d %v", i, want, code, ans)
		}
	}
	cov := r.coverage(t, token, map[string]any{"ns": p.jobNS})
	if num, den, _ := figureOf(cov, "jobsInstrumented"); num != 0 || den != 7 {
		t.Fatalf("before dbt ran: instrumented %d/%d, want 0/7", num, den)
	}
	p.run(t, proj, env, 0, filepath.Join(bin, "dbt"), "seed", "-q")
	p.run(t, proj, env, 0, filepath.Join(bin, "dbt-ol"), "build")
	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	cov = r.coverage(t, token, map[string]any{"ns": p.jobNS})
	if num, den, items := figureOf(cov, "jobsReporting"); num != 7 || den != 7 {
		t.Fatalf("after dbt-ol build: reporting %d/%d, not reporting %v", num, den, names(items, "name"))
	}
}

// TestCoverageRealAirflowListing registers what the real Airflow says it schedules (`airflow dags list -o json`,
// `airflow tasks list`), then runs the DAG: both tasks match the jobs the OpenLineage provider reported
// (`<dag_id>.<task_id>`). The DAG has no schedule and is paused at creation, so it is never counted as missing.
func TestCoverageRealAirflowListing(t *testing.T) {
	home := producerHome(t, "HEADWATER_TEST_AIRFLOW", "scripts/producers/airflow.sh")
	p := newProducerRun(t, "afcov")
	env, airflow, events := airflowProject(t, p, home)
	p.run(t, p.work, env, 0, airflow, "db", "migrate")
	p.run(t, p.work, env, 0, airflow, "dags", "reserialize")
	dags := lastLine(t, airflowOut(t, p.work, env, airflow, "dags", "list", "-o", "json"), "[")
	tasks := idLines(airflowOut(t, p.work, env, airflow, "tasks", "list", "hw_producers_dag"))
	doc, _ := json.Marshal(map[string]any{"dags": json.RawMessage(dags), "tasks": map[string]any{"hw_producers_dag": tasks}})

	url := fmt.Sprintf("http://%s/api/v1/inventory/airflow-%s?kind=airflow&jobNamespace=%s", p.api, p.jobNS, p.jobNS)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(doc))
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil {
		t.Fatal(err)
	}
	var ans map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&ans)
	resp.Body.Close()
	if resp.StatusCode != 200 || ans["added"].(float64) != 2 {
		t.Fatalf("register the Airflow listing %s: %d %v", doc, resp.StatusCode, ans)
	}
	p.run(t, p.work, env, 0, airflow, "dags", "test", "hw_producers_dag")
	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	r := &trustRun{api: p.api}
	cov := r.coverage(t, token, map[string]any{"ns": p.jobNS})
	if num, den, items := figureOf(cov, "jobsInstrumented"); num != 2 || den != 2 {
		t.Fatalf("instrumented %d/%d %v, want both tasks", num, den, items)
	}
	if _, den, _ := figureOf(cov, "jobsReporting"); den != 0 {
		t.Fatalf("a paused DAG without a schedule counts in jobsReporting (%d)", den)
	}
}

// airflowOut runs an airflow command and returns its standard output.
func airflowOut(t *testing.T, dir string, env []string, airflow string, args ...string) string {
	t.Helper()
	cmd := exec.Command(airflow, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("airflow %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// lastLine is the last line of out starting with prefix (the CLI prints warnings before its JSON).
func lastLine(t *testing.T, out, prefix string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range slices.Backward(lines) {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, out)
	return ""
}

// idLines keeps the lines that are task ids (the CLI prints warnings around them).
func idLines(out string) string {
	var ids []string
	for l := range strings.SplitSeq(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.ContainsAny(l, " []:") {
			ids = append(ids, l)
		}
	}
	return strings.Join(ids, "\n")
}
