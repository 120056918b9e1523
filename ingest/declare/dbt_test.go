package declare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

func readManifest(t *testing.T, edit func(map[string]any)) *dbtmanifest.Manifest {
	t.Helper()
	raw, err := os.ReadFile("../../inventory/dbtmanifest/testdata/hw_producers.manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["metadata"].(map[string]any)["generated_at"] = "2026-12-01T11:22:00.123456Z"
	if edit != nil {
		edit(doc)
	}
	b, _ := json.Marshal(doc)
	m, err := dbtmanifest.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var opts = Options{JobNamespace: "dbt-ns", DatasetNamespace: "duckdb:///tmp/w.duckdb"}

// The events of the e2e project's manifest pass the gateway's own decoder, carry the dbt_node facet and jobType
// that key the job as dbt-ol's runs key it, and name the relations dbt-ol names.
func TestEventsOfTheProducersManifest(t *testing.T) {
	m := readManifest(t, nil)
	events, sum, err := Events(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Models != 3 || sum.Seeds != 2 || sum.Snapshots != 0 || sum.Sources != 1 || sum.Jobs != 5 || len(events) != 5 {
		t.Fatalf("summary %+v, %d events", sum, len(events))
	}
	if len(sum.WithoutSQL) != 3 || len(sum.Unresolved) != 0 {
		t.Fatalf("a parse manifest has no compiled_code for the 3 models: %+v", sum)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, raw := range events {
		ev, err := dec.Decode(raw)
		if err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		if ev.Kind != olevent.KindJob || ev.Job.DbtUniqueID == "" || len(ev.FacetIssues) > 0 {
			t.Fatalf("event %s: kind %s uid %q issues %v", raw, ev.Kind, ev.Job.DbtUniqueID, ev.FacetIssues)
		}
		var ins []string
		for _, in := range ev.Inputs {
			ins = append(ins, in.Name)
		}
		got[ev.Job.Name+" "+ev.Job.JobType] = strings.Join(ins, ",") + " -> " + ev.Outputs[0].Name
	}
	want := map[string]string{
		"warehouse.main.hw_producers.customer_totals MODEL": "warehouse.main.stg_customers,warehouse.main.stg_orders -> warehouse.main.customer_totals",
		"warehouse.main.hw_producers.stg_customers MODEL":   "warehouse.main.raw_customers -> warehouse.main.stg_customers",
		"warehouse.main.hw_producers.stg_orders MODEL":      "warehouse.main.raw_orders -> warehouse.main.stg_orders",
		"seed.hw_producers.raw_customers SEED":              " -> warehouse.main.raw_customers",
		"seed.hw_producers.raw_orders SEED":                 " -> warehouse.main.raw_orders",
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	again, _, _ := Events(readManifest(t, nil), opts)
	if !slices.EqualFunc(events, again, bytes.Equal) {
		t.Fatal("the same manifest gave other events (a re-import would not be a duplicate)")
	}
}

// compiled_code becomes the job's SQL; an ephemeral model is followed to its own dependencies; a dependency on
// nothing in the manifest is reported.
func TestEventsSQLEphemeralAndUnresolved(t *testing.T) {
	m := readManifest(t, func(doc map[string]any) {
		nodes := doc["nodes"].(map[string]any)
		ct := nodes["model.hw_producers.customer_totals"].(map[string]any)
		ct["compiled_code"] = "select 1"
		so := nodes["model.hw_producers.stg_orders"].(map[string]any)
		so["config"].(map[string]any)["materialized"] = "ephemeral"
		so["relation_name"] = nil
		sc := nodes["model.hw_producers.stg_customers"].(map[string]any)
		sc["depends_on"].(map[string]any)["nodes"] = []any{"seed.hw_producers.raw_customers", "model.other.gone"}
	})
	events, sum, err := Events(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Models != 2 || !slices.Equal(sum.Unresolved, []string{"model.other.gone"}) || len(sum.WithoutSQL) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	var found bool
	for _, raw := range events {
		if strings.Contains(string(raw), `"unique_id":"model.hw_producers.customer_totals"`) {
			found = true
			if !strings.Contains(string(raw), `"query":"select 1"`) || !strings.Contains(string(raw), `"name":"warehouse.main.raw_orders"`) {
				t.Fatalf("customer_totals: no SQL or the ephemeral stg_orders not followed to raw_orders: %s", raw)
			}
		}
	}
	if !found {
		t.Fatal("no event for customer_totals")
	}
}

func TestEventsRefuseWithoutNamespacesOrTime(t *testing.T) {
	m := readManifest(t, nil)
	if _, _, err := Events(m, Options{JobNamespace: "x"}); err == nil || !strings.HasPrefix(err.Error(), "datasetNamespace") {
		t.Fatalf("no dataset namespace: %v", err)
	}
	if _, _, err := Events(m, Options{DatasetNamespace: "x"}); err == nil || !strings.HasPrefix(err.Error(), "jobNamespace") {
		t.Fatalf("no job namespace: %v", err)
	}
	m.GeneratedAt = "yesterday"
	if _, _, err := Events(m, opts); err == nil || !strings.HasPrefix(err.Error(), "metadata.generated_at") {
		t.Fatalf("bad time: %v", err)
	}
}

// An exposure (ADR 0070) is one more JobEvent: a job named by its unique_id (jobType EXPOSURE, no dbt_node facet:
// no dbt node job) reading the relations it depends on and writing its consumer dataset in the job namespace,
// with the owner (ownership facets), the description and the exposure facet; a disabled one is not sent.
func TestEventsOfAnExposure(t *testing.T) {
	m := readManifest(t, func(doc map[string]any) {
		doc["exposures"] = map[string]any{
			"exposure.hw_producers.weekly_revenue": map[string]any{"unique_id": "exposure.hw_producers.weekly_revenue",
				"name": "weekly_revenue", "label": "Weekly revenue", "type": "dashboard", "url": "https://bi.example.com/d/7",
				"maturity": "high", "description": "Revenue per customer.", "owner": map[string]any{"name": "Finance", "email": "fin@example.com"},
				"depends_on": map[string]any{"nodes": []any{"model.hw_producers.customer_totals", "source.hw_producers.raw.raw_orders"}}},
			"exposure.hw_producers.off": map[string]any{"unique_id": "exposure.hw_producers.off", "name": "off", "type": "notebook",
				"owner": map[string]any{"name": "x"}, "config": map[string]any{"enabled": false}},
		}
	})
	events, sum, err := Events(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Exposures != 1 || sum.Jobs != 6 || len(events) != 6 || sum.Edges != 9+3 {
		t.Fatalf("summary %+v, %d events", sum, len(events))
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	ev, err := dec.Decode(events[5])
	if err != nil {
		t.Fatal(err)
	}
	out := ev.Outputs[0]
	var ins []string
	for _, in := range ev.Inputs {
		ins = append(ins, in.Name)
	}
	if ev.Job.Namespace != "dbt-ns" || ev.Job.Name != "exposure.hw_producers.weekly_revenue" || ev.Job.JobType != ExposureJobType ||
		ev.Job.DbtUniqueID != "" || len(ev.FacetIssues) > 0 || strings.Join(ins, ",") != "warehouse.main.customer_totals,warehouse.main.raw_orders" ||
		out.Namespace != "dbt-ns" || out.Name != "exposure.hw_producers.weekly_revenue" || len(out.Owners) != 1 || out.Owners[0].Name != "fin@example.com" ||
		out.Description != "Revenue per customer." || len(ev.Job.Owners) != 1 {
		t.Fatalf("the exposure's event: %+v (issues %v)", ev.Job, ev.FacetIssues)
	}
	x := ExposuresOf(m)
	if len(x) != 1 || x["exposure.hw_producers.weekly_revenue"].OwnerEmail != "fin@example.com" || x["exposure.hw_producers.weekly_revenue"].Label != "Weekly revenue" {
		t.Fatalf("the exposures the report names: %+v", x)
	}
}

// A node's dbt tags and meta, and its columns' (ADR 0071), become the output's tags facet as openlineage-dbt
// renders them (tag: value true, source DBT; meta: its value, source DBT_META; a column's with the field), which
// the decoder reads as the dataset's tags; Headwater's own meta key is not a tag; a node without any sends none.
func TestEventsCarryDbtTagsAndMeta(t *testing.T) {
	m := readManifest(t, func(doc map[string]any) {
		n := doc["nodes"].(map[string]any)["model.hw_producers.customer_totals"].(map[string]any)
		n["tags"] = []any{"finance"}
		n["config"].(map[string]any)["meta"] = map[string]any{"contains_pii": true, "sla_hours": 6.0, MetaRenamedFrom: "model.hw_producers.x"}
		n["columns"] = map[string]any{"full_name": map[string]any{"name": "full_name", "tags": []any{"pii"}, "meta": map[string]any{"pii.name": "direct"}}}
	})
	events, _, err := Events(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, raw := range events {
		ev, err := dec.Decode(raw)
		if err != nil || len(ev.FacetIssues) > 0 {
			t.Fatalf("decode: %v %v", err, ev.FacetIssues)
		}
		for _, tg := range ev.Outputs[0].Tags {
			got = append(got, fmt.Sprintf("%s %s:%s=%s (%s)", ev.Outputs[0].Name, tg.Field, tg.Key, tg.Value, tg.Source))
		}
	}
	want := []string{
		"warehouse.main.customer_totals :finance=true (DBT)",
		"warehouse.main.customer_totals :contains_pii=true (DBT_META)",
		"warehouse.main.customer_totals :sla_hours=6 (DBT_META)",
		"warehouse.main.customer_totals full_name:pii=true (DBT)",
		"warehouse.main.customer_totals full_name:pii.name=direct (DBT_META)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tags:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A node the current declarations have and the manifest does not gets a withdrawal: a JobEvent at the manifest's
// time on its job (its current name, the dbt_node facet and its jobType) declaring nothing, so its declared edges
// close; nodes still in the manifest get none, and neither does anything when the current declarations are not
// older than the manifest.
func TestWithdrawals(t *testing.T) {
	m := readManifest(t, nil) // generated_at 2026-12-01T11:22:00.123456Z
	cur := Current{At: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Nodes: []DeclaredNode{
		{UniqueID: "model.hw_producers.gone", Dataset: "warehouse.main.gone", JobName: "warehouse.main.hw_producers.gone"},
		{UniqueID: "model.hw_producers.stg_orders", Dataset: "warehouse.main.stg_orders", JobName: "warehouse.main.hw_producers.stg_orders.build.run"},
		{UniqueID: "seed.hw_producers.old_seed", Dataset: "warehouse.main.old_seed", JobName: "seed.hw_producers.old_seed"},
	}}
	events, ids, err := Withdrawals(m, cur, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"model.hw_producers.gone", "seed.hw_producers.old_seed"}) || len(events) != 2 {
		t.Fatalf("withdrawn %v (%d events)", ids, len(events))
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	ev, err := dec.Decode(events[0])
	if err != nil || ev.Kind != olevent.KindJob || ev.Job.DbtUniqueID != "model.hw_producers.gone" || ev.Job.JobType != "MODEL" ||
		ev.Job.Name != "warehouse.main.hw_producers.gone" || len(ev.Inputs)+len(ev.Outputs) != 0 || len(ev.FacetIssues) > 0 {
		t.Fatalf("the withdrawal: %+v %v", ev, err)
	}
	cur.At = time.Date(2026, 12, 1, 11, 22, 0, 123456000, time.UTC)
	if events, ids, _ := Withdrawals(m, cur, opts); len(events)+len(ids) != 0 {
		t.Fatalf("current declarations as new as the manifest: withdrawn %v", ids)
	}
}
