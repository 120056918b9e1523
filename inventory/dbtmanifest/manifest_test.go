package dbtmanifest

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The manifest `dbt parse` wrote for the e2e project (e2e/testdata/producers/dbt), reduced to metadata, nodes
// and sources (testdata/hw_producers.manifest.json).
func readFixture(t *testing.T) *Manifest {
	t.Helper()
	f, err := os.Open("testdata/hw_producers.manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReadRealManifest(t *testing.T) {
	m := readFixture(t)
	if m.ProjectName != "hw_producers" || m.AdapterType != "duckdb" {
		t.Fatalf("metadata: %+v", m)
	}
	var ids []string
	for _, n := range m.Nodes {
		ids = append(ids, n.ResourceType+" "+n.UniqueID)
	}
	want := []string{"model model.hw_producers.customer_totals", "model model.hw_producers.stg_customers",
		"model model.hw_producers.stg_orders", "seed seed.hw_producers.raw_customers", "seed seed.hw_producers.raw_orders",
		"test test.hw_producers.not_null_stg_customers_customer_id.e2cfb1f9aa",
		"test test.hw_producers.not_null_stg_orders_order_id.81cfe2fe64",
		"test test.hw_producers.unique_stg_customers_customer_id.c7614daada",
		"test test.hw_producers.unique_stg_orders_order_id.e3b841c71a"}
	if !slices.Equal(ids, want) {
		t.Fatalf("nodes:\n%s\nwant\n%s", strings.Join(ids, "\n"), strings.Join(want, "\n"))
	}
	ct := m.Nodes[0]
	if ct.TableName() != "warehouse.main.customer_totals" || ct.JobBase() != "warehouse.main.hw_producers.customer_totals" {
		t.Fatalf("customer_totals: table %q job %q", ct.TableName(), ct.JobBase())
	}
	if !slices.Equal(ct.DependsOn, []string{"model.hw_producers.stg_customers", "model.hw_producers.stg_orders"}) {
		t.Fatalf("depends_on: %v", ct.DependsOn)
	}
	if len(m.Sources) != 1 || m.Sources[0].UniqueID != "source.hw_producers.raw.raw_orders" {
		t.Fatalf("sources: %+v", m.Sources)
	}
	// a generic test: what dbt-ol reports as its assertion (test_metadata.name, column_name) and the node it tests
	nn := m.Nodes[6]
	if nn.Name != "not_null_stg_orders_order_id" || nn.TestName != "not_null" || nn.ColumnName != "order_id" || nn.TestedNode() != "model.hw_producers.stg_orders" {
		t.Fatalf("a test: name %q test %q column %q tests %q", nn.Name, nn.TestName, nn.ColumnName, nn.TestedNode())
	}
}

func TestExpectedFollowsDbtOlNames(t *testing.T) {
	m := readFixture(t)
	jobs, err := Expected(m, Options{JobNamespace: "dbt-prod", DatasetNamespace: "duckdb:///w/warehouse.duckdb", Schedule: "@daily"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, j := range jobs {
		if j.Interval != 24*time.Hour || j.Namespace != "dbt-prod" {
			t.Errorf("%s: interval %v namespace %q", j.Name, j.Interval, j.Namespace)
		}
		got[j.Name] = j.MatchNames
	}
	if len(jobs) != 7 { // 3 models + 4 tests; seeds are no jobs
		t.Fatalf("%d expected jobs: %v", len(jobs), got)
	}
	if m := got["warehouse.main.hw_producers.stg_orders"]; !slices.Equal(m, []string{
		"warehouse.main.hw_producers.stg_orders", "warehouse.main.hw_producers.stg_orders.build.run"}) {
		t.Fatalf("stg_orders matches %v", m)
	}
	if m := got["test.hw_producers.not_null_stg_orders_order_id.81cfe2fe64"]; !slices.Contains(m,
		"warehouse.main.hw_producers.stg_orders.build.test") {
		t.Fatalf("a test of stg_orders matches %v", m)
	}
	for _, j := range jobs {
		if j.Name == "warehouse.main.hw_producers.customer_totals" {
			if len(j.Outputs) != 1 || j.Outputs[0].Name != "warehouse.main.customer_totals" || j.DbtUniqueID != "model.hw_producers.customer_totals" {
				t.Fatalf("customer_totals: %+v", j)
			}
		}
	}
}

func TestExpectedReadsCriticalityAndSkipsWhatNeverRuns(t *testing.T) {
	doc := `{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
	  "nodes": {
	    "model.p.a": {"resource_type": "model", "name": "a", "database": "db", "schema": "s", "alias": "a",
	      "relation_name": "\"db\".\"s\".\"a\"", "meta": {"criticality": "High", "schedule": "0 * * * *", "owner": "team-a"},
	      "config": {"materialized": "table"}, "depends_on": {"nodes": []}},
	    "model.p.b": {"resource_type": "model", "name": "b", "database": "db", "schema": "s", "alias": "b",
	      "tags": ["criticality:low"], "config": {"materialized": "view"}},
	    "model.p.eph": {"resource_type": "model", "name": "eph", "config": {"materialized": "ephemeral"}},
	    "model.p.off": {"resource_type": "model", "name": "off", "config": {"enabled": false}},
	    "snapshot.p.snap": {"resource_type": "snapshot", "name": "snap", "database": "db", "schema": "snaps",
	      "config": {"meta": {"criticality": "medium"}}}
	  }}`
	m, err := Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := Expected(m, Options{JobNamespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, crit, owner string
		interval          time.Duration
		matches           []string
	}{
		{"db.s.p.a", "High", "team-a", time.Hour, []string{"db.s.p.a", "db.s.p.a.build.run"}},
		{"db.s.p.b", "low", "", 0, []string{"db.s.p.b", "db.s.p.b.build.run"}},
		{"db.snaps.p.snap", "medium", "", 0, []string{"db.snaps.p.snap.snapshot", "db.snaps.p.snap.build.snapshot"}},
	}
	if len(jobs) != len(cases) {
		t.Fatalf("%d jobs, want %d (ephemeral and disabled models never run): %+v", len(jobs), len(cases), jobs)
	}
	for i, c := range cases {
		j := jobs[i]
		if j.Name != c.name || j.Criticality != c.crit || j.Owner != c.owner || j.Interval != c.interval ||
			!slices.Equal(j.MatchNames, c.matches) || len(j.Outputs) != 0 {
			t.Errorf("job %d = %+v, want %+v", i, j, c)
		}
	}
}

func TestReadRefusesWhatIsNotAManifest(t *testing.T) {
	for _, doc := range []string{`[]`, `{"metadata": {}}`, `{"nodes": `} {
		if _, err := Read(strings.NewReader(doc)); err == nil {
			t.Errorf("Read(%s) accepted it", doc)
		}
	}
	if _, err := Expected(&Manifest{}, Options{}); err == nil {
		t.Error("Expected without a job namespace accepted it")
	}
}

func TestSplitRelation(t *testing.T) {
	cases := map[string]string{`"db"."s"."t"`: "db.s.t", "`p`.`d`.`t`": "p.d.t", `[db].[s].[t]`: "db.s.t",
		`s.t`: "s.t", `"a.b"."t"`: "a.b.t", ``: ""}
	for in, want := range cases {
		if got := strings.Join(splitRelation(in), "."); got != want {
			t.Errorf("splitRelation(%s) = %q, want %q", in, got, want)
		}
	}
}
