package resolvers

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

func realRedis(t *testing.T) *redis.Client {
	testenv.Servers(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis: %v; start the stack with scripts/stack/stack.sh up", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// counter sums a counter family, optionally for one tier.
func (h *harness) counter(name, tier string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := tier == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "tier" && l.GetValue() == tier {
					match = true
				}
			}
			if match {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func TestCacheServesUntilGenerationBump(t *testing.T) {
	rdb := realRedis(t)
	h := newHarness(t, withRedis(rdb))
	fx := h.fx
	gens := cache.NewGenerations(rdb)
	ctx := context.Background()
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	j1 := fx.Job("j1")
	fx.Flow(j1, []string{a}, []string{b})
	vars := func() map[string]any { return map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"} }

	if g := h.lineage(vars()); !eq(g.names(), []string{"a", "b"}) {
		t.Fatalf("first answer %v", g.names())
	}
	hits := h.counter("headwater_cache_hits_total", cache.TierResults)
	if g := h.lineage(vars()); !eq(g.names(), []string{"a", "b"}) {
		t.Fatalf("second answer %v", g.names())
	}
	if h.counter("headwater_cache_hits_total", cache.TierResults) <= hits {
		t.Fatal("the second identical query must be a results-tier hit")
	}

	// A new edge b -> j2 -> c: invisible until the projector's bump, visible on the next query after it.
	j2 := fx.Job("j2")
	fx.Flow(j2, []string{b}, []string{c})
	if g := h.lineage(vars()); !eq(g.names(), []string{"a", "b"}) {
		t.Fatalf("before the bump the cached answer stands, got %v", g.names())
	}
	if err := gens.Bump(ctx, []string{b, j2, c}); err != nil {
		t.Fatal(err)
	}
	if g := h.lineage(vars()); !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("after the bump: %v, want the new edge", g.names())
	}

	// Close a -> j1: after the bump the closed edge is never served from cache.
	closed := graph.Millis(fx.Now.Add(-time.Minute))
	fx.Exec(`MATCH (:Dataset {key: $a})-[r:INPUT_TO]->(:Job {key: $j}) SET r.tos = [$t], r.validTo = $t`,
		map[string]any{"a": a, "j": j1, "t": closed})
	if err := gens.Bump(ctx, []string{a, j1, b}); err != nil {
		t.Fatal(err)
	}
	if g := h.lineage(vars()); !eq(g.names(), []string{"a"}) {
		t.Fatalf("after closing a->j1: %v, want a alone", g.names())
	}
	// asOf before the close still shows it (explicit asOf is keyed exactly).
	before := fx.Now.Add(-time.Hour).Format(time.RFC3339Nano)
	if g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM", "asOf": before}); !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("asOf before the close: %v", g.names())
	}
	if h.counter("headwater_cache_errors_total", "") != 0 {
		t.Fatal("no cache errors expected with Redis up")
	}
}

func TestEpochBumpInvalidatesEverything(t *testing.T) {
	rdb := realRedis(t)
	h := newHarness(t, withRedis(rdb))
	fx := h.fx
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	fx.Flow(fx.Job("j1"), []string{a}, []string{b})
	vars := map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"}
	h.lineage(vars)
	fx.Flow(fx.Job("j2"), []string{b}, []string{c})
	if err := cache.NewGenerations(rdb).BumpEpoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := h.lineage(vars); !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("after an epoch bump: %v", g.names())
	}
}

func TestRedisDownStillAnswersCorrectly(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = dead.Close() })
	h := newHarness(t, withRedis(dead))
	chain(h.fx)
	for range 2 {
		g := h.lineage(map[string]any{"start": dsStart(h.fx.NS, "a"), "dir": "DOWNSTREAM"})
		if !eq(g.names(), []string{"a", "b", "c"}) || len(g.Edges) != 2 {
			t.Fatalf("with Redis down: %v", g.names())
		}
	}
	if h.counter("headwater_cache_errors_total", "") == 0 {
		t.Fatal("headwater_cache_errors_total must count the failures")
	}
}
