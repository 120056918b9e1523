package lineage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
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
