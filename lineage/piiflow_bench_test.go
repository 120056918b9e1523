package lineage_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
)

// piiChain builds the piiFlow benchmark shape: a chain of hops+1 datasets d000..dNNN, each with width fields
// c00..; one job per hop writes d(i) from d(i-1) (dataset-level INPUT_TO/OUTPUT_TO and COLUMN_FEEDS): c00 <- c00
// IDENTITY, c01 <- c00 TRANSFORMATION, c02 <- c00 TRANSFORMATION masking, c03 <- c00 AGGREGATION, and every other
// field ck <- ck IDENTITY plus ck <- c00 INDIRECT/FILTER (the Spark integration's shape for a filter on c00).
// d000.c00 carries the tag `pii`. It returns the number of column edges.
func piiChain(fx *lineagetest.Fixture, hops, width int) int {
	col := func(k int) string { return fmt.Sprintf("c%02d", k) }
	var prev []string
	edges := 0
	var prevDS, first string
	for i := 0; i <= hops; i++ {
		ds := fx.Dataset(fmt.Sprintf("d%03d", i))
		if i == 0 {
			first = ds
		}
		fields := make([]string, width)
		for k := range fields {
			fields[k] = fx.Field(ds, col(k), fx.T0, time.Time{})
		}
		if i > 0 {
			job := fx.Job(fmt.Sprintf("j%03d", i))
			fx.Flow(job, []string{prevDS}, []string{ds})
			tr := func(typ, sub string, mask bool) lineagetest.Transform {
				return lineagetest.Transform{Type: typ, Subtype: sub, Masking: mask}
			}
			fx.ColumnFeeds(prev[0], fields[0], job, tr("DIRECT", "IDENTITY", false))
			fx.ColumnFeeds(prev[0], fields[1], job, tr("DIRECT", "TRANSFORMATION", false))
			fx.ColumnFeeds(prev[0], fields[2], job, tr("DIRECT", "TRANSFORMATION", true))
			fx.ColumnFeeds(prev[0], fields[3], job, tr("DIRECT", "AGGREGATION", false))
			edges += 4
			for k := 4; k < width; k++ {
				fx.ColumnFeeds(prev[k], fields[k], job, tr("DIRECT", "IDENTITY", false))
				fx.ColumnFeeds(prev[0], fields[k], job, tr("INDIRECT", "FILTER", false))
				edges += 2
			}
		}
		prev, prevDS = fields, ds
	}
	fx.Exec(`MATCH (d:Dataset {key: $k}) SET d.tags = ['c00:pii=true']`, map[string]any{"k": first})
	return edges
}

// BenchmarkPiiFlow: piiFlow of `pii` from d000.c00 over 10 hops (the default depth; the walk reads 11), on the
// piiChain shape with 8 and with 50 fields per dataset, answered from Neo4j and with the neighbour tier in Redis
// (warm after the first iteration). Reports the fields reached and stops per answer.
func BenchmarkPiiFlow(b *testing.B) {
	store := testenv.Store(b)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	b.Cleanup(func() { _ = rdb.Close() })
	for _, width := range []int{8, 50} {
		fx := lineagetest.New(b, store)
		edges := piiChain(fx, 10, width)
		from := &api.NodeRef{Field: &api.FieldRef{Namespace: fx.NS, Name: "d000", Field: "c00"}}
		for _, variant := range []struct {
			name  string
			cache *cache.Store
		}{{"neo4j", nil}, {"redis", cache.New(rdb, nil, nil)}} {
			svc, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123"},
				Cache: variant.cache, Clock: fx.Clock(), Catalog: newCatalog(b, store, nil, nil, fx.Clock())})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("chain_10x%d_%dedges/%s", width, edges, variant.name), func(b *testing.B) {
				var reached, stops int
				for b.Loop() {
					f, err := svc.PiiFlow(context.Background(), lineage.PiiFlowArgs{Tag: "pii", From: from})
					if err != nil {
						b.Fatal(err)
					}
					reached, stops = len(f.Reached), len(f.Stops)
				}
				b.ReportMetric(float64(reached), "reached")
				b.ReportMetric(float64(stops), "stops")
			})
		}
	}
}

// Design-size piiFlow benchmark (issue 19): the world of `hwload history` (loadtest/gen's shape, whose sources
// carry PII field tags, docs/loadtest.md), loaded beforehand with
//
//	hwload history --prefix $P --datasets 30000 --run-days 0 --pii-tags
//
// and named by HEADWATER_BENCH_PREFIX (HEADWATER_BENCH_DATASETS, default 30000, and HEADWATER_BENCH_SEED, default
// 1, must match the load). Without HEADWATER_BENCH_PREFIX it loads a world of benchSmallDatasets under a fresh
// prefix first (minutes), so the benchmark always runs.
const (
	benchSmallDatasets = 2000
	// benchPiiRoots is how many tagged source datasets the flows start from (most consumed first).
	benchPiiRoots = 20
)

// BenchmarkPiiFlowDesignSize: piiFlow of `pii` over 10 hops (the default depth) from the tagged fields of the
// benchPiiRoots most consumed tagged sources, one root per iteration in turn, answered from Neo4j ("uncached":
// no Headwater cache; Neo4j's page cache is warm after the first round) and with the neighbour tier in Redis
// (warm after the first round). Reports P50/P95/P99 per answer, mean reached fields and stops, and the machine's
// 1-minute load average when it finished.
func BenchmarkPiiFlowDesignSize(b *testing.B) {
	store := testenv.Store(b)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	b.Cleanup(func() { _ = rdb.Close() })
	w := benchHistoryWorld(b, store)
	roots := benchPiiRootsOf(w)
	if len(roots) == 0 {
		b.Fatal("no tagged source with consumers in the world")
	}
	// the environment is part of a dataset's key: name lookups canonicalise as the service configured with
	// `hwload envs` does
	norm, err := normalize.New(normalize.Config{Environments: gen.Environments(w.Config.Prefix), DefaultEnv: "unmapped"})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.New(store, catalog.Options{Canon: norm, Clock: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	for _, variant := range []struct {
		name  string
		cache *cache.Store
	}{{"uncached", nil}, {"cached", cache.New(rdb, nil, nil)}} {
		svc, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123"},
			Cache: variant.cache, Clock: time.Now, Catalog: cat})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%ddatasets_%droots/%s", len(w.Datasets), len(roots), variant.name), func(b *testing.B) {
			var lat []time.Duration
			var reached, stops, i int
			if variant.cache != nil { // warm the neighbour tier: one round before timing
				for _, r := range roots {
					if _, err := svc.PiiFlow(context.Background(), lineage.PiiFlowArgs{Tag: "pii", From: r}); err != nil {
						b.Fatal(err)
					}
				}
			}
			for b.Loop() {
				start := time.Now()
				f, err := svc.PiiFlow(context.Background(), lineage.PiiFlowArgs{Tag: "pii", From: roots[i%len(roots)]})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				reached, stops, i = reached+len(f.Reached), stops+len(f.Stops), i+1
			}
			reportPercentiles(b, lat)
			b.ReportMetric(float64(reached)/float64(i), "reached/op")
			b.ReportMetric(float64(stops)/float64(i), "stops/op")
			b.ReportMetric(load1(), "load1")
		})
	}
}

// benchHistoryWorld is the world the benchmark reads: the one HEADWATER_BENCH_PREFIX names (rebuilt from the same
// flags), or a small one loaded now.
func benchHistoryWorld(b *testing.B, store *graph.Store) *gen.World {
	b.Helper()
	prefix, datasets, seed := os.Getenv("HEADWATER_BENCH_PREFIX"), 30000, uint64(1)
	if v := os.Getenv("HEADWATER_BENCH_DATASETS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("HEADWATER_BENCH_DATASETS: %v", err)
		}
		datasets = n
	}
	if v := os.Getenv("HEADWATER_BENCH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			b.Fatalf("HEADWATER_BENCH_SEED: %v", err)
		}
		seed = n
	}
	load := prefix == ""
	if load {
		prefix, datasets = strings.ToLower(strings.ReplaceAll(testenv.Namespace(b), "_", "-")), benchSmallDatasets
	}
	c := gen.DefaultConfig(seed, time.Now())
	c.Prefix, c.Datasets = prefix, datasets
	w, err := gen.NewWorld(c)
	if err != nil {
		b.Fatal(err)
	}
	if load {
		l, err := history.NewLoader(store, history.Config{World: w, HistoryDays: 365, RunDays: 0, BatchRows: 5000,
			Writers: 2, End: time.Now().UTC().Truncate(time.Second), PIITags: true}, slog.New(slog.DiscardHandler), time.Now)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Load(context.Background()); err != nil {
			b.Fatalf("load: %v", err)
		}
	}
	return w
}

// benchPiiRootsOf are the benchPiiRoots tagged sources read by the most jobs (ties by id), as piiFlow `from`s.
func benchPiiRootsOf(w *gen.World) []*api.NodeRef {
	cons := w.Consumers()
	var ids []int
	for _, d := range w.Datasets {
		if len(d.Tags) > 0 && cons[d.ID] > 0 {
			ids = append(ids, d.ID)
		}
	}
	slices.SortFunc(ids, func(a, b int) int {
		if cons[a] != cons[b] {
			return cons[b] - cons[a]
		}
		return a - b
	})
	var out []*api.NodeRef
	for _, id := range ids[:min(len(ids), benchPiiRoots)] {
		d := w.Datasets[id]
		out = append(out, &api.NodeRef{Dataset: &api.DatasetRef{Namespace: d.Namespace, Name: d.Name}})
	}
	return out
}

// reportPercentiles reports P50, P95 and P99 of the latencies in milliseconds.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// load1 is the machine's 1-minute load average (0 when unreadable).
func load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return f
}
