package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
)

// impact uploads a candidate manifest to POST /api/v1/declare/dbt/{project}/impact with tok; it returns the
// status, the raw answer and the report.
func (d *declareRun) impact(t *testing.T, tok string, manifest []byte, renamed ...string) (int, string, *api.ReleaseImpact) {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(manifest)
	_ = zw.Close()
	q := url.Values{"jobNamespace": {d.jobNS}, "datasetNamespace": {d.dsNS}, "renamed": renamed}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s/api/v1/declare/dbt/hw_producers/impact?%s", d.api, q.Encode()), &gz)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r api.ReleaseImpact
	_ = json.Unmarshal(raw, &r)
	return resp.StatusCode, string(raw), &r
}

func (d *declareRun) edit(t *testing.T, file string, edit func(string) string) {
	t.Helper()
	p := filepath.Join(d.proj, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(edit(string(b))), 0o600); err != nil {
		t.Fatal(err)
	}
}

// change finds the report's change of kind on dataset (and column).
func change(t *testing.T, r *api.ReleaseImpact, kind api.ReleaseChangeKind, dataset string) *api.ReleaseChange {
	t.Helper()
	for _, c := range r.Changes {
		if c.Kind == kind && c.Dataset == dataset {
			return c
		}
	}
	raw, _ := json.MarshalIndent(r.Changes, "", " ")
	t.Fatalf("no %s change of %s in the report: %s", kind, dataset, raw)
	return nil
}

// Issue 20, pre-release impact, on the real dbt project: its manifest imported as declared lineage, `dbt-ol
// build` run, then a candidate manifest (`dbt parse` of an edited project, not imported) that drops the column
// stg_orders.order_amount, which customer_totals.total_amount is computed from, and renames the model
// stg_customers to stg_people. The report names the diff (the rename only because --renamed says so), the affected
// datasets, fields, jobs and owners, direct and indirect, each with its evidence; `headwater declare dbt --impact
// --fail-on ...` exits non-zero on it and prints the markdown report; releaseImpact(candidate:) answers the same
// candidate over GraphQL, only to its uploader; a narrow principal's report names nothing hidden from it.
func TestDeclareDbtPreReleaseImpact(t *testing.T) {
	d := newDeclareRun(t)
	d.edit(t, "models/schema.yml", func(s string) string {
		return strings.Replace(s, "  - name: customer_totals\n    description: Total spent per customer.\n",
			"  - name: customer_totals\n    description: Total spent per customer.\n    config:\n      meta:\n        owner: finance-analytics@example.com\n", 1)
	})
	d.dbt(t, "parse", "-q")
	imported := filepath.Join(d.work, "imported.json")
	if err := os.WriteFile(imported, d.manifest(t), 0o600); err != nil {
		t.Fatal(err)
	}
	d.declareOK(t, d.manifest(t))
	d.dbt(t, "seed", "-q")
	d.run(t, d.proj, d.env, 0, filepath.Join(d.bin, "dbt-ol"), "build")
	waitEvents(t, d.store, eventIDs(t, d.events), projectTimeout)

	// the candidate: order_amount dropped from stg_orders, stg_customers renamed stg_people (customer_totals
	// still sums o.order_amount: the breakage the report is for)
	d.edit(t, "models/stg_orders.sql", func(s string) string { return strings.Replace(s, "amount as order_amount, ", "", 1) })
	d.edit(t, "models/schema.yml", func(s string) string {
		s = strings.Replace(s, "      - name: order_amount\n        description: The order's amount in dollars.\n", "", 1)
		// order_id's documentation (and tests) dropped too, status documented instead: nothing downstream has
		// column lineage from order_id
		s = strings.Replace(s, "      - name: order_id\n        description: The order's id.\n        data_tests: [unique, not_null]\n",
			"      - name: status\n        description: The order's status.\n", 1)
		return strings.Replace(s, "  - name: stg_customers\n", "  - name: stg_people\n", 1)
	})
	if err := os.Rename(filepath.Join(d.proj, "models", "stg_customers.sql"), filepath.Join(d.proj, "models", "stg_people.sql")); err != nil {
		t.Fatal(err)
	}
	d.edit(t, "models/customer_totals.sql", func(s string) string { return strings.Replace(s, "ref('stg_customers')", "ref('stg_people')", 1) })
	d.dbt(t, "parse", "-q")
	candidate := d.manifest(t)

	code, raw, r := d.impact(t, token, candidate, "stg_customers=stg_people")
	if code != http.StatusOK {
		t.Fatalf("impact: %d %s", code, raw)
	}
	wantLines(t, "the diff", diffLines(r.Diff), []string{
		"column ADDED model.hw_producers.stg_orders warehouse.main.stg_orders.status",
		"column REMOVED model.hw_producers.stg_orders warehouse.main.stg_orders.order_amount",
		"column REMOVED model.hw_producers.stg_orders warehouse.main.stg_orders.order_id",
		"dependency ADDED model.hw_producers.customer_totals warehouse.main.stg_people",
		"dependency REMOVED model.hw_producers.customer_totals warehouse.main.stg_customers",
		"renamed model.hw_producers.stg_customers -> model.hw_producers.stg_people (flag)",
	})
	// the dropped column: customer_totals.total_amount reads it directly (column lineage dbt-ol observed)
	col := column(t, r, "order_amount")
	var fields []string
	for _, f := range col.Fields {
		fields = append(fields, fmt.Sprintf("%s.%s direct=%v distance=%d job=%s %s", strings.TrimPrefix(f.Dataset, "warehouse.main."), f.Field,
			f.Direct, f.Distance, strings.TrimPrefix(f.Job, "warehouse.main."), f.Evidence.Label))
	}
	wantLines(t, "fields affected by dropping order_amount", fields, []string{
		"customer_totals.total_amount direct=true distance=1 job=hw_producers.customer_totals.build.run observed 0 days ago",
	})
	// the renamed model: its relation is read directly by customer_totals' job (declared and observed)
	ren := change(t, r, api.ChangeModelRenamed, "warehouse.main.stg_customers")
	var datasets []string
	for _, ds := range ren.Datasets {
		datasets = append(datasets, fmt.Sprintf("%s direct=%v jobs=%s owners=%s %s", strings.TrimPrefix(ds.Name, "warehouse.main."), ds.Direct,
			strings.Join(ds.Jobs, ","), strings.Join(ds.Owners, ","), ds.Evidence.Label))
	}
	wantLines(t, "datasets affected by the rename", datasets, []string{
		"customer_totals direct=true jobs=warehouse.main.hw_producers.customer_totals.build.run owners=finance-analytics@example.com observed 0 days ago and declared",
		"exposure.hw_producers.weekly_revenue direct=false jobs=exposure.hw_producers.weekly_revenue owners=finance-analytics@example.com declared only",
	})
	// the project's exposure (models/exposures.yml, ADR 0070): the dashboard reading customer_totals, named with
	// its type, owner and url
	if len(ren.Exposures) != 1 {
		t.Fatalf("the rename's exposures: %s", raw)
	}
	if x := ren.Exposures[0]; x.UniqueID != "exposure.hw_producers.weekly_revenue" || x.Type != "dashboard" || x.Label != "Weekly revenue" ||
		x.OwnerName != "Finance analytics" || x.OwnerEmail != "finance-analytics@example.com" || x.URL != "https://bi.example.com/dashboards/weekly-revenue" ||
		x.Direct || x.Distance != 2 || x.Evidence.Label != "declared only" {
		t.Fatalf("the affected exposure: %+v", x)
	}
	if len(ren.Jobs) == 0 || !ren.Jobs[0].Direct || ren.Jobs[0].Name != "warehouse.main.hw_producers.customer_totals.build.run" {
		t.Fatalf("the rename's jobs: %s", raw)
	}
	if !slices.Contains(r.Owners, "finance-analytics@example.com") || r.Candidate == "" || r.CurrentDeclaredAt == nil {
		t.Fatalf("report owners, candidate id or declaration time: %s", raw)
	}
	if len(col.Datasets) != 2 || col.Datasets[0].Name != "warehouse.main.customer_totals" || !col.Datasets[0].Direct || len(col.Exposures) != 1 {
		t.Fatalf("datasets downstream of stg_orders: %s", raw)
	}
	// order_id: customer_totals reads stg_orders, but no column lineage leaves order_id (n_orders is count(*)):
	// the report claims no field and says why
	id := column(t, r, "order_id")
	// (and the exposure reading customer_totals is declared only: that gap is said too)
	if len(id.Fields) != 0 || len(id.Gaps) != 2 || !hasGapKind(id.Gaps, api.GapNoColumnLineage) || !hasGapKind(id.Gaps, api.GapDeclaredOnly) || len(id.Datasets) != 2 {
		t.Fatalf("the order_id change's gaps: %s", raw)
	}

	// the CLI: markdown for the pull request, non-zero exit on the rules
	out := filepath.Join(d.work, "impact.md")
	errOut := filepath.Join(d.work, "impact.err")
	d.run(t, d.work, []string{"HEADWATER_TOKEN=" + token}, 1, "sh", "-c", fmt.Sprintf(
		"%s declare dbt --impact --markdown --url %s --manifest %s --job-namespace %s --dataset-namespace %s --renamed stg_customers=stg_people --fail-on removed-column-read-within=30d --fail-on removed-model-read-within=30d > %s 2> %s",
		binary, d.url(), filepath.Join(d.work, "target", "manifest.json"), d.jobNS, d.dsNS, out, errOut))
	md, _ := os.ReadFile(out)
	stderr, _ := os.ReadFile(errOut)
	t.Logf("the markdown report:\n%s", md)
	for _, want := range []string{"### :x: Failing rules", "removed-column-read-within=30d: column order_amount removed from warehouse.main.stg_orders; read into warehouse.main.customer_totals.total_amount by warehouse.main.hw_producers.customer_totals.build.run",
		"removed-model-read-within=30d: model.hw_producers.stg_customers renamed to model.hw_producers.stg_people", "finance-analytics@example.com",
		"| `warehouse.main.customer_totals.total_amount` | direct | 1 |", "- NO_COLUMN_LINEAGE: no column lineage downstream of this field",
		"- dashboard **Weekly revenue** (`exposure.hw_producers.weekly_revenue`) owned by Finance analytics <finance-analytics@example.com> is affected (indirect, distance 2, declared only): https://bi.example.com/dashboards/weekly-revenue"} {
		if !strings.Contains(string(md), want) {
			t.Fatalf("the markdown report lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(string(stderr), "2 rule violations") {
		t.Fatalf("the CLI's error does not say the rules failed: %s", stderr)
	}
	// the same rules on the manifest as imported (no change) pass
	d.run(t, d.work, []string{"HEADWATER_TOKEN=" + token}, 0, binary, "declare", "dbt", "--impact", "--url", d.url(),
		"--manifest", imported, "--job-namespace", d.jobNS, "--dataset-namespace", d.dsNS,
		"--fail-on", "removed-column-read-within=0d", "--fail-on", "removed-model-read-within=0d")

	// GraphQL: the uploaded candidate by its id, only for its uploader
	const rq = `query($c: ID!) { releaseImpact(candidate: $c) { candidate project diff { removed { uniqueId } renamed { from to source } }
		changes { kind dataset fields { dataset field direct evidence { label daysAgo } } datasets { name owners } } owners markdown } }`
	g := gql(t, d.api, token, rq, map[string]any{"c": r.Candidate})["releaseImpact"].(map[string]any)
	if got := fmt.Sprint(g["owners"]); got != "[finance-analytics@example.com]" || !strings.Contains(fmt.Sprint(g["markdown"]), "customer_totals.total_amount") {
		t.Fatalf("releaseImpact: %v", g)
	}
	if _, errs := gqlErrs(t, d.api, readerToken, rq, map[string]any{"c": r.Candidate}); !strings.Contains(fmt.Sprint(errs), "NOT_FOUND") {
		t.Fatalf("another principal read the candidate: %v", errs)
	}

	// a narrow principal: lineage on the project's namespaces, stg_customers denied
	narrowTok := d.narrowReader(t, token, "impact")
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, nraw, nr := d.impact(t, narrowTok, candidate)
		if code == http.StatusOK && !strings.Contains(nraw, "stg_customers") {
			if !nr.PermissionsFiltered {
				t.Fatalf("the narrow report does not say it is filtered: %s", nraw)
			}
			// what it may see is still answered: the dropped column and its reader
			c := column(t, nr, "order_amount")
			if len(c.Fields) != 1 || c.Fields[0].Field != "total_amount" {
				t.Fatalf("the narrow report lost what it may see: %s", nraw)
			}
			// nothing hidden is named (the markdown neither), and the renamed model, whose current relation it may
			// not see, shows as the addition the candidate makes
			md := fetchMarkdown(t, d, narrowTok, candidate)
			if strings.Contains(md, "stg_customers") {
				t.Fatalf("the narrow markdown names a hidden node:\n%s", md)
			}
			wantLines(t, "the narrow diff", diffLines(nr.Diff), []string{
				"added model.hw_producers.stg_people warehouse.main.stg_people",
				"column ADDED model.hw_producers.stg_orders warehouse.main.stg_orders.status",
				"column REMOVED model.hw_producers.stg_orders warehouse.main.stg_orders.order_amount",
				"column REMOVED model.hw_producers.stg_orders warehouse.main.stg_orders.order_id",
				"dependency ADDED model.hw_producers.customer_totals warehouse.main.stg_people",
			})
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the narrow principal's report names what it may not see (or grants never took effect): %d %s", code, nraw)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// the rename it cannot see the old side of is refused as a rename of nothing (the same words as for a model
	// that does not exist)
	if code, nraw, _ := d.impact(t, narrowTok, candidate, "stg_customers=stg_people"); code != http.StatusBadRequest ||
		!strings.Contains(nraw, "renamed: model.hw_producers.stg_customers is not in the project's current declarations") {
		t.Fatalf("a narrow rename of a hidden model: %d %s", code, nraw)
	}
}

// column finds the report's COLUMN_REMOVED change of stg_orders' column.
func column(t *testing.T, r *api.ReleaseImpact, name string) *api.ReleaseChange {
	t.Helper()
	for _, c := range r.Changes {
		if c.Kind == api.ChangeColumnRemoved && c.Column != nil && *c.Column == name {
			return c
		}
	}
	t.Fatalf("no removal of column %s in the report", name)
	return nil
}

func fetchMarkdown(t *testing.T, d *declareRun, tok string, manifest []byte) string {
	t.Helper()
	q := url.Values{"jobNamespace": {d.jobNS}, "datasetNamespace": {d.dsNS}, "format": {"markdown"}}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s/api/v1/declare/dbt/hw_producers/impact?%s", d.api, q.Encode()), bytes.NewReader(manifest))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("markdown: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

func diffLines(d *api.ReleaseDiff) []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, n := range d.Added {
		out = append(out, "added "+n.UniqueID+" "+n.Dataset)
	}
	for _, n := range d.Removed {
		out = append(out, "removed "+n.UniqueID+" "+n.Dataset)
	}
	for _, n := range d.Renamed {
		out = append(out, fmt.Sprintf("renamed %s -> %s (%s)", n.From, n.To, n.Source))
	}
	for _, c := range d.Columns {
		out = append(out, fmt.Sprintf("column %s %s %s.%s", c.Change, c.UniqueID, c.Dataset, c.Column))
	}
	for _, c := range d.Dependencies {
		out = append(out, fmt.Sprintf("dependency %s %s %s", c.Change, c.UniqueID, c.Dependency))
	}
	slices.Sort(out)
	return out
}

func hasGapKind(gs []api.ReleaseGap, k api.GapKind) bool {
	return slices.ContainsFunc(gs, func(g api.ReleaseGap) bool { return g.Kind == k })
}
