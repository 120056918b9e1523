package lineage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// shape builds a named fixture graph and says where and how to start.
type shape struct {
	name  string
	build func(fx *lineagetest.Fixture) (start string, dir api.Direction, depth int)
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

func datasets(fx *lineagetest.Fixture, ns []string) []string {
	keys := make([]string, len(ns))
	for i, n := range ns {
		keys[i] = fx.Dataset(n)
	}
	return keys
}

func shapes() []shape {
	return []shape{
		{"wide_fanout_100", func(fx *lineagetest.Fixture) (string, api.Direction, int) {
			fx.Flow(fx.Job("j"), datasets(fx, []string{"root"}), datasets(fx, names("out", 100)))
			return "root", api.Downstream, 2
		}},
		{"deep_chain_20", func(fx *lineagetest.Fixture) (string, api.Direction, int) {
			ds := datasets(fx, names("d", 21))
			for i := 1; i < len(ds); i++ {
				fx.Flow(fx.Job(fmt.Sprintf("j%03d", i)), ds[i-1:i], ds[i:i+1])
			}
			return "d000", api.Downstream, 20
		}},
		{"diamond_x5", func(fx *lineagetest.Fixture) (string, api.Direction, int) {
			prev := fx.Dataset("top")
			for i := range 5 {
				mid := datasets(fx, []string{fmt.Sprintf("l%d", i), fmt.Sprintf("r%d", i)})
				bottom := fx.Dataset(fmt.Sprintf("b%d", i))
				fx.Flow(fx.Job(fmt.Sprintf("split%d", i)), []string{prev}, mid)
				fx.Flow(fx.Job(fmt.Sprintf("join%d", i)), mid, []string{bottom})
				prev = bottom
			}
			return "top", api.Downstream, 10
		}},
		{"cycle_20", func(fx *lineagetest.Fixture) (string, api.Direction, int) {
			ds := datasets(fx, names("c", 20))
			for i := range ds {
				fx.Flow(fx.Job(fmt.Sprintf("j%03d", i)), ds[i:i+1], []string{ds[(i+1)%len(ds)]})
			}
			return "c000", api.Both, 20
		}},
		{"hub_30x30", func(fx *lineagetest.Fixture) (string, api.Direction, int) {
			hub := fx.Dataset("hub")
			for i, in := range datasets(fx, names("in", 30)) {
				fx.Flow(fx.Job(fmt.Sprintf("load%03d", i)), []string{in}, []string{hub})
			}
			for i, out := range datasets(fx, names("out", 30)) {
				fx.Flow(fx.Job(fmt.Sprintf("use%03d", i)), []string{hub}, []string{out})
			}
			return "hub", api.Both, 3
		}},
	}
}

func BenchmarkExpander(b *testing.B) {
	store := testenv.Store(b)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	b.Cleanup(func() { _ = rdb.Close() })
	for _, sh := range shapes() {
		fx := lineagetest.New(b, store)
		start, dir, depth := sh.build(fx)
		args := lineage.LineageArgs{Start: api.NodeRef{Dataset: &api.DatasetRef{Namespace: fx.NS, Name: start}},
			Direction: dir, Depth: depth, Granularity: api.GranDataset}
		for _, variant := range []struct {
			name  string
			cache *cache.Store
		}{{"neo4j", nil}, {"redis", cache.New(rdb, nil, nil)}} {
			svc, err := lineage.NewService(store, lineage.Options{Config: lineage.Config{CursorKey: "bench-cursor-key-0123456789abcdef0123"},
				Cache: variant.cache, Clock: fx.Clock(), Catalog: newCatalog(b, store, nil, nil, fx.Clock())})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(sh.name+"/"+variant.name, func(b *testing.B) {
				ctx := context.Background()
				var nodes int
				for b.Loop() {
					g, err := svc.Lineage(ctx, args)
					if err != nil {
						b.Fatal(err)
					}
					nodes = len(g.Nodes)
				}
				b.ReportMetric(float64(nodes), "nodes")
			})
		}
	}
}

// newCatalog is the catalog a service built in a benchmark materialises its nodes with (as cmd/headwater wires it).
func newCatalog(tb testing.TB, store *graph.Store, pol authz.Policy, red *authz.Redactor, clock func() time.Time) *catalog.Catalog {
	tb.Helper()
	c, err := catalog.New(store, catalog.Options{Policy: pol, Redactor: red, Clock: clock})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
