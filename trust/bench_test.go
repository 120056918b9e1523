package trust_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/truststore"
)

// benchJobs is the inventory size of the benchmark.
const benchJobs = 16_000

// BenchmarkCoverage16k: an inventory of 16,000 expected jobs (dbt-named, 70 % reporting under a build name),
// jobsReporting and jobsInstrumented for the inventory's namespace and for everything (the whole shared
// database). Reports the P99 of the iterations.
func BenchmarkCoverage16k(b *testing.B) {
	store := testenv.Store(b)
	fx := lineagetest.New(b, store)
	var jobs []inventory.Job
	var reported []map[string]any
	for i := range benchJobs {
		name := fmt.Sprintf("warehouse.main.p.m%05d", i)
		jobs = append(jobs, inventory.Job{Namespace: fx.NS, Name: name, MatchNames: []string{name, name + ".build.run"},
			DbtUniqueID: fmt.Sprintf("model.p.m%05d", i), DbtMatches: []string{fmt.Sprintf("model.p.m%05d|NODE", i)},
			Criticality: []string{"high", "medium", "low"}[i%3], Schedule: "@daily", Interval: 24 * time.Hour})
		if i%10 < 7 {
			reported = append(reported, map[string]any{"key": graph.JobKey(fx.NS, name+".build.run"), "name": name + ".build.run"})
		}
	}
	fx.Exec(`UNWIND $rows AS r MERGE (j:Job {key: r.key}) SET j.namespace = $ns, j.name = r.name, j.lastSeenAt = $now`,
		map[string]any{"rows": reported, "ns": fx.NS, "now": graph.Millis(fx.Now)})
	src := "bench-" + testenv.Token(6)
	inv := inventory.Inventory{Source: src, Kind: inventory.KindDbt, Jobs: jobs}
	if err := inv.Normalize(); err != nil {
		b.Fatal(err)
	}
	if _, err := registry.NewStore(store).Register(b.Context(), inv, "bench", fx.Now); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		fx.Exec(`MATCH (n) WHERE (n:ExpectedJob AND n.source = $s) OR (n:InventorySource AND n.key = $s) OR (n:Job AND n.namespace = $ns)
DETACH DELETE n`, map[string]any{"s": src, "ns": fx.NS})
	})
	svc, _ := trust.NewService(truststore.NewStore(store), nil, trust.Config{}, fx.Clock())
	for _, c := range []struct{ name, ns string }{{"namespace", fx.NS}, {"everything", ""}} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				began := time.Now()
				rep, err := svc.Report(b.Context(), authz.Principal{Subject: "bench"}, trust.Query{Namespace: c.ns})
				if err != nil {
					b.Fatal(err)
				}
				f, err := rep.Figure(b.Context(), trust.SignalJobsReporting)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rep.Figure(b.Context(), trust.SignalJobsInstrumented); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(began))
				if c.ns != "" && (f.Denominator != benchJobs || f.Numerator != benchJobs*7/10) {
					b.Fatalf("%d/%d reporting", f.Numerator, f.Denominator)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Milliseconds()), "p99-ms")
			b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		})
	}
}
