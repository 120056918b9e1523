package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// declareRun is one declared-lineage test on the real dbt project (testdata/producers/dbt, dbt-duckdb).
type declareRun struct {
	*producerRun
	proj, bin, dsNS string
	env             []string
	events          string // dbt-ol's own copy of what it sent
}

func newDeclareRun(t *testing.T) *declareRun {
	home := producerHome(t, "HEADWATER_TEST_DBT", "scripts/producers/dbt.sh")
	p := newProducerRun(t, "dbtdecl")
	d := &declareRun{producerRun: p, proj: filepath.Join(p.work, "project"), bin: filepath.Join(home, "venv", "bin"),
		events: filepath.Join(p.work, "events.jsonl")}
	src, _ := filepath.Abs("testdata/producers/dbt")
	copyTree(t, src, d.proj)
	olConfig := filepath.Join(p.work, "openlineage.yml")
	cfg := fmt.Sprintf("transport:\n  type: composite\n  continue_on_failure: false\n  transports:\n    headwater:\n      type: http\n      url: %s\n      endpoint: api/v1/lineage\n      auth:\n        type: api_key\n        apiKey: %s\n    copy:\n      type: file\n      log_file_path: %s\n      append: true\n",
		p.url(), token, d.events)
	if err := os.WriteFile(olConfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(p.work, "warehouse.duckdb")
	d.dsNS = "duckdb://" + db
	d.env = []string{"PATH=" + d.bin + ":" + os.Getenv("PATH"), "DBT_PROFILES_DIR=" + d.proj, "HW_DBT_PATH=" + db,
		"HW_DBT_TARGET=" + filepath.Join(p.work, "target"), "OPENLINEAGE_CONFIG=" + olConfig,
		"OPENLINEAGE_NAMESPACE=" + p.jobNS, "DBT_SEND_ANONYMOUS_USAGE_STATS=false"}
	return d
}

func (d *declareRun) dbt(t *testing.T, args ...string) {
	d.run(t, d.proj, d.env, 0, filepath.Join(d.bin, "dbt"), args...)
}

func (d *declareRun) manifest(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join(d.work, "target", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// declare uploads a manifest (gzip) to POST /api/v1/declare/dbt/{project} with tok.
func (d *declareRun) declare(t *testing.T, tok string, manifest []byte) (int, map[string]any) {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(manifest)
	_ = zw.Close()
	url := fmt.Sprintf("http://%s/api/v1/declare/dbt/hw_producers?jobNamespace=%s&datasetNamespace=%s", d.api, d.jobNS, d.dsNS)
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

func (d *declareRun) declareOK(t *testing.T, manifest []byte) []string {
	t.Helper()
	code, ans := d.declare(t, token, manifest)
	if code != http.StatusOK || ans["accepted"] != true {
		t.Fatalf("declare: %d %v", code, ans)
	}
	var ids []string
	for _, x := range ans["eventIds"].([]any) {
		ids = append(ids, x.(string))
	}
	if len(ids) != 6 {
		t.Fatalf("declare: %d events, want 6 (3 models, 2 seeds, 1 exposure): %v", len(ids), ans)
	}
	waitEvents(t, d.store, ids, projectTimeout)
	return ids
}

const declaredEdgesQ = `query($start: NodeRef!, $dir: Direction!) {
	lineage(start: $start, direction: $dir, depth: 3, includeAttempted: true) {
		nodes { id ... on Dataset { namespace name } }
		edges { from to job { name } evidence { kind source } } } }`

// edges renders the dataset edges of the lineage from name (direction dir) as "from -> to job evidence", sorted,
// and returns the answer's JSON too.
// narrowReader creates a principal (named after label) with DESCRIBE and VIEW_LINEAGE on the project's job and
// dataset namespaces but both denied on warehouse.main.stg_customers, and answers its token; admin grants it.
func (d *declareRun) narrowReader(t *testing.T, admin, label string) string {
	t.Helper()
	narrow := runID + "-" + label + "-narrow-" + testenv.Token(4)
	gql(t, d.api, admin, `mutation($r: String!) { createRole(name: $r) }`, map[string]any{"r": narrow})
	grant := `mutation($g: GrantInput!) { grant(grant: $g) }`
	for _, ns := range []string{d.jobNS, d.dsNS} {
		for _, priv := range []string{"DESCRIBE", "VIEW_LINEAGE"} {
			gql(t, d.api, admin, grant, map[string]any{"g": map[string]any{"role": narrow, "privilege": priv, "on": map[string]any{"namespace": ns}}})
		}
	}
	for _, priv := range []string{"DESCRIBE", "VIEW_LINEAGE"} {
		gql(t, d.api, admin, grant, map[string]any{"g": map[string]any{"role": narrow, "privilege": priv, "effect": "DENY",
			"on": map[string]any{"namespace": d.dsNS, "dataset": "warehouse.main.stg_customers"}}})
	}
	gql(t, d.api, admin, `mutation($s: String!, $r: String!) { bindRole(subject: $s, role: $r) }`, map[string]any{"s": narrow, "r": narrow})
	return newToken(t, narrow)
}

func (d *declareRun) edges(t *testing.T, tok, name, dir string) ([]string, string) {
	t.Helper()
	data := gql(t, d.api, tok, declaredEdgesQ, map[string]any{"dir": dir,
		"start": map[string]any{"dataset": map[string]any{"namespace": d.dsNS, "name": name}}})
	raw, _ := json.Marshal(data)
	l := data["lineage"].(map[string]any)
	names := map[string]string{}
	for _, x := range l["nodes"].([]any) {
		n := x.(map[string]any)
		names[n["id"].(string)] = strings.TrimPrefix(fmt.Sprint(n["name"]), "warehouse.main.")
	}
	var out []string
	for _, x := range l["edges"].([]any) {
		e := x.(map[string]any)
		job := "none"
		if j, ok := e["job"].(map[string]any); ok {
			job = strings.TrimPrefix(j["name"].(string), "warehouse.main.")
		}
		var ev []string
		for _, y := range e["evidence"].([]any) {
			v := y.(map[string]any)
			ev = append(ev, fmt.Sprintf("%v/%v", v["kind"], v["source"]))
		}
		slices.Sort(ev)
		out = append(out, fmt.Sprintf("%s -> %s job=%s %s", names[e["from"].(string)], names[e["to"].(string)], job,
			strings.Join(ev, ",")))
	}
	slices.Sort(out)
	return out, string(raw)
}

func wantLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\ngot  %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// Issue 20: the real project's manifest (`dbt parse`) imported as declared lineage, then `dbt-ol build`: declared
// and observed evidence sit side by side on the same edges between the same dataset nodes (no second node per
// relation, no second job per model); the seed's edge, which dbt-ol's events leave out, is declared; re-importing
// the same manifest is a duplicate (same event ids, nothing changes); a principal without PRODUCE is refused
// (nothing declared) and the refusal audited; a narrow reader's answer names nothing hidden from it.
func TestDeclareDbtManifestBesideObservedRuns(t *testing.T) {
	d := newDeclareRun(t)
	d.dbt(t, "parse", "-q")
	parsed := d.manifest(t)
	ids := d.declareOK(t, parsed)

	declared, _ := d.edges(t, token, "warehouse.main.customer_totals", "UPSTREAM")
	wantLines(t, "declared upstream of customer_totals, before any run", declared, []string{
		"raw_customers -> stg_customers job=hw_producers.stg_customers DECLARED/jobEvent",
		"raw_orders -> stg_orders job=hw_producers.stg_orders DECLARED/jobEvent",
		"stg_customers -> customer_totals job=hw_producers.customer_totals DECLARED/jobEvent",
		"stg_orders -> customer_totals job=hw_producers.customer_totals DECLARED/jobEvent",
	})
	// dbt parse writes no compiled_code: the declared job has no SQL, and the answer says which jobs lack it
	_, ans := d.declare(t, token, parsed)
	if without := fmt.Sprint(ans["summary"].(map[string]any)["withoutSql"]); !strings.Contains(without, "model.hw_producers.customer_totals") {
		t.Fatalf("a parse manifest's answer does not name the jobs without SQL: %v", ans["summary"])
	}

	d.dbt(t, "seed", "-q")
	d.run(t, d.proj, d.env, 0, filepath.Join(d.bin, "dbt-ol"), "build")
	waitEvents(t, d.store, eventIDs(t, d.events), projectTimeout)

	both, _ := d.edges(t, token, "warehouse.main.customer_totals", "UPSTREAM")
	wantLines(t, "declared and observed upstream of customer_totals after dbt-ol build", both, []string{
		"raw_customers -> stg_customers job=hw_producers.stg_customers.build.run DECLARED/jobEvent,OBSERVED/columnLineage",
		"raw_orders -> stg_orders job=hw_producers.stg_orders.build.run DECLARED/jobEvent,OBSERVED/run",
		"stg_customers -> customer_totals job=hw_producers.customer_totals.build.run DECLARED/jobEvent,OBSERVED/run",
		"stg_orders -> customer_totals job=hw_producers.customer_totals.build.run DECLARED/jobEvent,OBSERVED/run",
	})
	a := d.answer(t)
	var names []string
	for _, ds := range a.datasets() {
		names = append(names, strings.TrimPrefix(ds[1], "warehouse.main."))
	}
	wantLines(t, "dataset nodes (one per relation)", names, []string{"customer_totals", "raw_customers", "raw_orders",
		"stg_customers", "stg_orders"})
	// the declared JobEvents landed on the jobs dbt-ol's runs report: one job per node, both names recorded
	const jobQ = `query($ns: String!, $u: String!, $r: DbtRole!) { dbtJob(namespace: $ns, uniqueId: $u, role: $r) { id names } }`
	for _, model := range []string{"stg_orders", "stg_customers", "customer_totals"} {
		uid := "model.hw_producers." + model
		j := gql(t, d.api, token, jobQ, map[string]any{"ns": d.jobNS, "u": uid, "r": "NODE"})["dbtJob"].(map[string]any)
		base := "warehouse.main.hw_producers." + model
		if got := fmt.Sprint(j["names"]); got != fmt.Sprint([]string{base, base + ".build.run"}) {
			t.Fatalf("%s: names %s, want the declared (run) name and the build name on one job", model, got)
		}
		recs := a.cypher(`MATCH (j:Job {namespace: $ns}) WHERE (j.dbtUniqueId = $u AND j.dbtRole = 'NODE')
			OR (j.dbtUniqueId IS NULL AND j.name STARTS WITH $base) RETURN count(j) AS n`,
			map[string]any{"ns": d.jobNS, "u": uid, "base": base})
		if n, _ := recs[0].Get("n"); n.(int64) != 1 {
			t.Fatalf("%s: %v jobs for the model, want one", model, n)
		}
	}
	// seeds: dbt-ol reports no job for them; the declaration does (raw_customers is its seed job's output)
	seed := gql(t, d.api, token, jobQ, map[string]any{"ns": d.jobNS, "u": "seed.hw_producers.raw_customers", "r": "NODE"})
	if j, _ := seed["dbtJob"].(map[string]any); j == nil {
		t.Fatalf("no declared job for the seed raw_customers: %v", seed)
	}

	// the same manifest again: the same event ids, all duplicates, the same answer
	_, again := d.declare(t, token, parsed)
	if got := fmt.Sprint(again["eventIds"]); got != fmt.Sprint(ids) {
		t.Fatalf("re-import gave other event ids: %s, first %v", got, ids)
	}
	before := dump(t, d.store, scope{jobNS: d.jobNS, dsNS: d.dsNS})
	waitEvents(t, d.store, ids, projectTimeout)
	time.Sleep(2 * time.Second) // a re-import that did project would have by now
	if after := dump(t, d.store, scope{jobNS: d.jobNS, dsNS: d.dsNS}); after != before {
		t.Fatalf("re-importing the same manifest changed the graph:\nbefore %s\nafter  %s", before, after)
	}

	// no PRODUCE on the namespaces: refused whole, nothing declared, audited
	code, refused := d.declare(t, readerToken, parsed)
	if code != http.StatusForbidden || refused["accepted"] != false || refused["eventIds"] != nil {
		t.Fatalf("a reader declared: %d %v", code, refused)
	}
	recs := gql(t, d.api, token, `query($p: String) { auditRecords(first: 50, principal: $p) { nodes { operation decision reason } } }`,
		map[string]any{"p": runID + "-reader"})
	audited := false
	for _, x := range recs["auditRecords"].(map[string]any)["nodes"].([]any) {
		r := x.(map[string]any)
		audited = audited || (r["operation"] == "declareDbt" && r["decision"] == "DENY" &&
			strings.Contains(fmt.Sprint(r["reason"]), "produce-permission"))
	}
	if !audited {
		t.Fatalf("the refused declaration is not audited: %v", recs)
	}

	// a narrow reader: lineage on the project's namespaces, but stg_customers denied
	narrowTok := d.narrowReader(t, token, "decl")
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen, raw := d.edges(t, narrowTok, "warehouse.main.customer_totals", "UPSTREAM")
		if len(seen) > 0 {
			if strings.Contains(raw, "stg_customers") || strings.Contains(raw, "raw_customers") {
				t.Fatalf("the narrow reader's answer names what it may not see: %s", raw)
			}
			wantLines(t, "the narrow reader's declared and observed upstream", seen, []string{
				"raw_orders -> stg_orders job=hw_producers.stg_orders.build.run DECLARED/jobEvent,OBSERVED/run",
				"stg_orders -> customer_totals job=hw_producers.customer_totals.build.run DECLARED/jobEvent,OBSERVED/run",
			})
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the narrow reader's grants never took effect: %s", raw)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Issue 20: a later manifest supersedes the project's declarations. customer_totals stops depending on
// stg_customers; `headwater declare dbt` (the CLI) with the re-parsed manifest closes that declared edge (its
// DECLARED interval ends at the new manifest's generated_at: asOf before it still shows it) and keeps the others.
// A `dbt compile` manifest carries compiled_code: it becomes the declared job's SQL.
func TestDeclareDbtWithdrawnDependencyCloses(t *testing.T) {
	d := newDeclareRun(t)
	d.dbt(t, "parse", "-q")
	d.declareOK(t, d.manifest(t))
	const q = `query($start: NodeRef!, $asOf: Time) { lineage(start: $start, direction: UPSTREAM, depth: 1, asOf: $asOf) {
		nodes { id ... on Dataset { name } } edges { from to evidence { kind } } } }`
	upstream := func(asOf any) []string {
		data := gql(t, d.api, token, q, map[string]any{"asOf": asOf,
			"start": map[string]any{"dataset": map[string]any{"namespace": d.dsNS, "name": "warehouse.main.customer_totals"}}})
		l := data["lineage"].(map[string]any)
		names := map[string]string{}
		for _, x := range l["nodes"].([]any) {
			n := x.(map[string]any)
			names[n["id"].(string)] = fmt.Sprint(n["name"])
		}
		var out []string
		for _, x := range l["edges"].([]any) {
			out = append(out, strings.TrimPrefix(names[x.(map[string]any)["from"].(string)], "warehouse.main."))
		}
		slices.Sort(out)
		return out
	}
	wantLines(t, "declared inputs of customer_totals", upstream(nil), []string{"stg_customers", "stg_orders"})
	between := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(1100 * time.Millisecond) // the next manifest's generated_at is later

	sql := filepath.Join(d.proj, "models", "customer_totals.sql")
	if err := os.WriteFile(sql, []byte("select o.customer_id, sum(o.order_amount) as total_amount\nfrom {{ ref('stg_orders') }} o\ngroup by o.customer_id\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.dbt(t, "compile", "-q")
	out := filepath.Join(d.work, "declare.out")
	d.run(t, d.work, []string{"HEADWATER_TOKEN=" + token}, 0, "sh", "-c", fmt.Sprintf("%s declare dbt --url %s --manifest %s --job-namespace %s --dataset-namespace %s > %s",
		binary, d.url(), filepath.Join(d.work, "target", "manifest.json"), d.jobNS, d.dsNS, out))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Accepted bool
		EventIDs []string
		Summary  struct {
			WithoutSQL []string `json:"withoutSql"`
		}
	}
	if err := json.Unmarshal(b, &ans); err != nil || !ans.Accepted || len(ans.EventIDs) != 6 || len(ans.Summary.WithoutSQL) != 0 {
		t.Fatalf("headwater declare dbt: %s (%v)", b, err)
	}
	waitEvents(t, d.store, ans.EventIDs, projectTimeout)
	wantLines(t, "declared inputs of customer_totals after the dependency was removed", upstream(nil), []string{"stg_orders"})
	wantLines(t, "declared inputs of customer_totals as of before", upstream(between), []string{"stg_customers", "stg_orders"})

	v := gql(t, d.api, token, `query($ns: String!, $u: String!) { dbtJob(namespace: $ns, uniqueId: $u) { version { sql } } }`,
		map[string]any{"ns": d.jobNS, "u": "model.hw_producers.customer_totals"})
	if got := fmt.Sprint(v); !strings.Contains(got, `from "warehouse"."main"."stg_orders"`) {
		t.Fatalf("the declared job's SQL is not the compiled code: %s", got)
	}
}
