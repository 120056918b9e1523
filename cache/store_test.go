package cache

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/internal/testenv"
)

func TestEntriesValidatedByGenerations(t *testing.T) {
	testenv.Servers(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis: %v", err)
	}
	s := New(rdb, prometheus.NewRegistry(), nil)
	node, other := "n-"+testenv.Token(6), "n-"+testenv.Token(6)
	k := Key{Tier: TierNeighbors, Op: "D", Node: node, AsOf: "1"}
	gens, ok := s.Snapshot(ctx, TierNeighbors, []string{node, other})
	if !ok {
		t.Fatal("snapshot failed")
	}
	s.PutMany(ctx, TierNeighbors, time.Minute, []Item{{Key: k, Value: []string{"x"}, Gens: gens}})
	if h := s.Get(ctx, TierNeighbors, k); h == nil || string(h.Value) != `["x"]` {
		t.Fatalf("hit = %+v", h)
	}
	if err := NewGenerations(rdb).Bump(ctx, []string{other}); err != nil {
		t.Fatal(err)
	}
	if h := s.Get(ctx, TierNeighbors, k); h != nil {
		t.Fatal("an entry whose dependency was bumped must not be served")
	}
	var nilStore *Store
	if nilStore.Get(ctx, TierResults, k) != nil {
		t.Fatal("a nil store always misses")
	}
}
