// Package cache is Headwater's Redis cache: per-node generations that the projector bumps after each commit,
// typed canonical keys, and entries validated against the generations of the nodes they were computed from.
//
// Invariants: an entry is used only if every generation it recorded (and the global epoch) still holds, checked
// with one MGET; Redis errors count in headwater_cache_errors_total and turn into misses, never into failed or
// wrong answers. docs/caching.md lists every key, TTL and invalidation.
package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Generation keys.
const (
	genPrefix = "hw:gen:"
	// EpochKey is the global epoch: bumping it invalidates every entry.
	EpochKey = "epoch"
	// UnresolvedKey is bumped whenever an unresolved-identity record is written.
	UnresolvedKey = "unresolved"
)

// GenKey is the Redis key of a node's generation.
func GenKey(nodeKey string) string { return genPrefix + nodeKey }

// Generations reads and bumps per-node generations.
type Generations struct{ rdb *redis.Client }

// NewGenerations wraps a Redis client.
func NewGenerations(rdb *redis.Client) *Generations { return &Generations{rdb: rdb} }

// Bump increments hw:gen:<key> for each key in one pipeline. The projector calls it after each commit.
func (g *Generations) Bump(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	pipe := g.rdb.Pipeline()
	for _, k := range keys {
		pipe.Incr(ctx, GenKey(k))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("bump %d generations: %w", len(keys), err)
	}
	return nil
}

// BumpEpoch increments the global epoch, invalidating every entry (after a bump could not reach Redis).
func (g *Generations) BumpEpoch(ctx context.Context) error {
	if err := g.rdb.Incr(ctx, GenKey(EpochKey)).Err(); err != nil {
		return fmt.Errorf("bump epoch: %w", err)
	}
	return nil
}

// Snapshot reads the generations of keys and the epoch with one MGET. A missing key is generation 0.
func (g *Generations) Snapshot(ctx context.Context, keys []string) (map[string]int64, error) {
	all := append([]string{EpochKey}, keys...)
	rk := make([]string, len(all))
	for i, k := range all {
		rk[i] = GenKey(k)
	}
	vals, err := g.rdb.MGet(ctx, rk...).Result()
	if err != nil {
		return nil, fmt.Errorf("read %d generations: %w", len(rk), err)
	}
	out := make(map[string]int64, len(all))
	for i, v := range vals {
		n, err := genValue(v)
		if err != nil {
			return nil, err
		}
		out[all[i]] = n
	}
	return out, nil
}

func genValue(v any) (int64, error) {
	switch s := v.(type) {
	case nil:
		return 0, nil
	case string:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("generation %q: %w", s, err)
		}
		return n, nil
	}
	return 0, errors.New("generation of unexpected type")
}
