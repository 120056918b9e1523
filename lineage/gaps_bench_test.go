package lineage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/truststore"
)

// gapsBenchInventory is the inventory size of the benchmark (16,000 expected jobs).
const gapsBenchInventory = 16_000

// BenchmarkTrustGaps3Hop: the cost the trust gaps (JOB_NOT_REPORTING, PRODUCER_STALE, coverage) add to a 3-hop
// downstream lineage answer, P50 and P99 with and without them, same root, the variants interleaved, with the results tier off (neo4j)
// and on (redis), and with the per-scope memo of an answer's gaps (TrustGapsTTL; the fixed clock makes every
// request after the first a memo hit) and without it (nomemo: every request computes them). The world: a tree root -> 8 jobs -> 8 datasets -> 8 jobs each -> 64 datasets -> 1 job each ->
// 64 datasets (137 datasets, 136 jobs on the answer), each job with one run whose two events name one of 4
// producer principals; an inventory of 16,000 expected jobs of which the 136 on the answer list its datasets as
// outputs (30 % of them never reported).
func BenchmarkTrustGaps3Hop(b *testing.B) {
	store := testenv.Store(b)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	b.Cleanup(func() { _ = rdb.Close() })
	fx := lineagetest.New(b, store)
	var jobs []inventory.Job
	var runs []map[string]any
	n := 0
	flow := func(in string, outName string) string {
		jn := fmt.Sprintf("job%04d", n)
		n++
		out := fx.Dataset(outName)
		j := fx.Job(jn)
		fx.Flow(j, []string{in}, []string{out})
		exp := jn
		if n%10 < 3 {
			exp = jn + ".never"
		}
		jobs = append(jobs, inventory.Job{Namespace: fx.NS, Name: exp, Schedule: "@daily", Interval: 24 * time.Hour,
			Outputs: []inventory.Dataset{{Namespace: fx.NS, Name: outName}}})
		runs = append(runs, map[string]any{"job": j, "run": fmt.Sprintf("%s-run-%s", fx.NS, jn), "p": fmt.Sprintf("%s-prod%d", fx.NS, n%4)})
		return out
	}
	root := fx.Dataset("root")
	for i := range 8 {
		l1 := flow(root, fmt.Sprintf("l1.%d", i))
		for k := range 8 {
			l2 := flow(l1, fmt.Sprintf("l2.%d.%d", i, k))
			flow(l2, fmt.Sprintf("l3.%d.%d", i, k))
		}
	}
	fx.Exec(`UNWIND $runs AS x MATCH (j:Job {key: x.job})
CREATE (r:Run {key: x.run, jobKey: x.job, state: 'COMPLETE', firstEventAt: $t})-[:OF_JOB]->(j)
WITH r, x UNWIND [0, 1] AS i
CREATE (:Event {key: x.run + '-' + toString(i) + '\u001f' + x.p, eventId: x.run + '-' + toString(i), principal: x.p,
  runKey: x.run, kind: 'RUN', eventType: 'COMPLETE', eventTime: $t + i * 60000, receivedAt: $t + i * 60000})-[:OF_RUN]->(r)`,
		map[string]any{"runs": runs, "t": graph.Millis(fx.Now.Add(-2 * time.Hour))})
	for i := len(jobs); i < gapsBenchInventory; i++ {
		jobs = append(jobs, inventory.Job{Namespace: fx.NS + "-other", Name: fmt.Sprintf("other%05d", i), Schedule: "@daily",
			Interval: 24 * time.Hour, Outputs: []inventory.Dataset{{Namespace: fx.NS + "-other", Name: fmt.Sprintf("t%05d", i)}}})
	}
	src := "gapsbench-" + testenv.Token(6)
	inv := inventory.Inventory{Source: src, Kind: inventory.KindList, Jobs: jobs}
	if err := inv.Normalize(); err != nil {
		b.Fatal(err)
	}
	if _, err := registry.NewStore(store).Register(b.Context(), inv, "bench", fx.Now); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		fx.Exec(`MATCH (n) WHERE (n:ExpectedJob AND n.source = $s) OR (n:InventorySource AND n.key = $s) DETACH DELETE n`,
			map[string]any{"s": src})
	})
	ts, err := trust.NewService(truststore.NewStore(store), nil, trust.Config{}, fx.Clock())
	if err != nil {
		b.Fatal(err)
	}
	args := lineage.LineageArgs{Start: api.NodeRef{Dataset: &api.DatasetRef{Namespace: fx.NS, Name: "root"}},
		Direction: api.Downstream, Depth: 3, Granularity: api.GranDataset, MaxNodes: 1000}
	variants := []struct {
		name  string
		trust lineage.TrustSource
		ttl   time.Duration
	}{{"without", nil, 0}, {"with", gapsource.New(ts, truststore.NewStore(store), fx.Clock()), 0},
		{"nomemo", gapsource.New(ts, truststore.NewStore(store), fx.Clock()), -1}}
	for _, tier := range []struct {
		name  string
		cache *cache.Store
	}{{"neo4j", nil}, {"redis", cache.New(rdb, nil, nil)}} {
		svcs := make([]*lineage.Service, len(variants))
		for i, v := range variants {
			svcs[i], err = lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123",
				TrustGapsTTL: v.ttl}, Cache: tier.cache, Clock: fx.Clock(), Catalog: newCatalog(b, store, nil, nil, fx.Clock()), Trust: v.trust})
			if err != nil {
				b.Fatal(err)
			}
		}
		// the variants are asked in turn on every iteration (rotating who goes first), so the shared machine's
		// load drifts over all of them alike
		b.Run(tier.name, func(b *testing.B) {
			ctx := context.Background()
			lat := make([][]time.Duration, len(variants))
			gaps := make([]int, len(variants))
			for i, svc := range svcs { // warm: the inventory and producer health read once, the memo and tiers filled
				if _, err := svc.Lineage(ctx, args); err != nil {
					b.Fatal(err)
				}
				_ = i
			}
			round := 0
			for b.Loop() {
				for k := range svcs {
					i := (k + round) % len(svcs)
					began := time.Now()
					g, err := svcs[i].Lineage(ctx, args)
					if err != nil {
						b.Fatal(err)
					}
					lat[i] = append(lat[i], time.Since(began))
					gaps[i] = len(g.Gaps)
				}
				round++
			}
			for i, v := range variants {
				slices.Sort(lat[i])
				b.ReportMetric(float64(lat[i][len(lat[i])/2].Microseconds())/1000, v.name+"-p50-ms")
				b.ReportMetric(float64(lat[i][(len(lat[i])*95+99)/100-1].Microseconds())/1000, v.name+"-p95-ms")
				b.ReportMetric(float64(lat[i][(len(lat[i])*99+99)/100-1].Microseconds())/1000, v.name+"-p99-ms")
				b.ReportMetric(float64(gaps[i]), v.name+"-gaps")
			}
		})
	}
}
