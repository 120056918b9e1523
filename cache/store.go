package cache

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Store reads and writes generation-validated entries. A nil *Store is a cache that always misses.
type Store struct {
	rdb     *redis.Client
	gens    *Generations
	metrics *metrics
	log     *slog.Logger
	breaker *breaker
}

// New returns a Store over rdb (nil rdb: nil Store, the cache is off). reg may be nil.
func New(rdb *redis.Client, reg prometheus.Registerer, log *slog.Logger) *Store {
	if rdb == nil {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{rdb: rdb, gens: NewGenerations(rdb), metrics: newMetrics(reg), log: log,
		breaker: &breaker{now: time.Now, cooldown: BreakerCooldown}}
}

// entry is what Redis holds: the generations the value was computed from and the value. It is stored as the
// generations' JSON, a newline, then the value's JSON, so a lookup parses only the (small) generations and hands
// the value over unscanned (JSON never holds a raw newline).
type entry struct {
	Gens  map[string]int64
	Value json.RawMessage
}

func encodeEntry(gens map[string]int64, value []byte) ([]byte, error) {
	g, err := json.Marshal(gens)
	if err != nil {
		return nil, err
	}
	return append(append(g, '\n'), value...), nil
}

func decodeEntry(s string) *entry {
	before, after, ok := strings.Cut(s, "\n")
	if !ok {
		return nil
	}
	var e entry
	if json.Unmarshal([]byte(before), &e.Gens) != nil || e.Gens == nil {
		return nil
	}
	e.Value = json.RawMessage(after)
	return &e
}

// Hit is a validated entry.
type Hit struct {
	Value json.RawMessage
	Gens  map[string]int64
}

// GetMany looks keys up with one MGET and validates all hits with one more MGET of their generations.
// hits[i] is nil on a miss, an invalidated entry or any Redis error (counted, logged at debug).
func (s *Store) GetMany(ctx context.Context, tier string, keys []Key) []*Hit {
	hits := make([]*Hit, len(keys))
	if s == nil || len(keys) == 0 {
		return hits
	}
	s.metrics.requests.WithLabelValues(tier).Add(float64(len(keys)))
	if !s.usable(tier) {
		return hits
	}
	entries, err := s.fetch(ctx, keys)
	if err != nil {
		s.fail(tier, "get", err)
		return hits
	}
	current, err := s.gens.Snapshot(ctx, genKeysOf(entries))
	if err != nil {
		s.fail(tier, "validate", err)
		return hits
	}
	for i, e := range entries {
		if e != nil && valid(e.Gens, current) {
			hits[i] = &Hit{Value: e.Value, Gens: e.Gens}
			s.metrics.hits.WithLabelValues(tier).Inc()
		}
	}
	return hits
}

// Get is GetMany for one key.
func (s *Store) Get(ctx context.Context, tier string, k Key) *Hit {
	return s.GetMany(ctx, tier, []Key{k})[0]
}

func (s *Store) fetch(ctx context.Context, keys []Key) ([]*entry, error) {
	rk := make([]string, len(keys))
	for i, k := range keys {
		rk[i] = k.String()
	}
	vals, err := s.rdb.MGet(ctx, rk...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]*entry, len(vals))
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue
		}
		out[i] = decodeEntry(str)
	}
	return out, nil
}

func genKeysOf(entries []*entry) []string {
	seen := map[string]bool{EpochKey: true}
	var out []string
	for _, e := range entries {
		if e == nil {
			continue
		}
		for k := range e.Gens {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// valid: every recorded generation (the epoch included) is still current.
func valid(recorded, current map[string]int64) bool {
	if _, ok := recorded[EpochKey]; !ok {
		return false
	}
	for k, g := range recorded {
		if current[k] != g {
			return false
		}
	}
	return true
}

// Snapshot reads current generations (with the epoch) to record in an entry about to be computed. Read them
// BEFORE reading the data the entry holds, so that a commit racing with the read invalidates the entry.
func (s *Store) Snapshot(ctx context.Context, tier string, keys []string) (map[string]int64, bool) {
	if s == nil || !s.usable(tier) {
		return nil, false
	}
	g, err := s.gens.Snapshot(ctx, keys)
	if err != nil {
		s.fail(tier, "snapshot", err)
		return nil, false
	}
	return g, true
}

// Item is one entry to write.
type Item struct {
	Key   Key
	Value any
	Gens  map[string]int64 // must include the epoch (use Snapshot)
}

// PutMany writes entries in one pipeline. Errors are counted and otherwise ignored.
func (s *Store) PutMany(ctx context.Context, tier string, ttl time.Duration, items []Item) {
	if s == nil || len(items) == 0 || !s.usable(tier) {
		return
	}
	pipe := s.rdb.Pipeline()
	for _, it := range items {
		if _, ok := it.Gens[EpochKey]; !ok {
			continue
		}
		v, err := json.Marshal(it.Value)
		if err != nil {
			s.fail(tier, "encode", err)
			continue
		}
		b, err := encodeEntry(it.Gens, v)
		if err != nil {
			s.fail(tier, "encode", err)
			continue
		}
		pipe.Set(ctx, it.Key.String(), b, ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		s.fail(tier, "put", err)
	}
}

// usable is false while the breaker is open (Redis failed recently); each skip counts as an error.
func (s *Store) usable(tier string) bool {
	if s.breaker.open() {
		s.metrics.errors.WithLabelValues(tier, "skipped").Inc()
		return false
	}
	return true
}

// fail counts a Redis error. Only an unreachable Redis (refused or broken connection) opens the breaker; a
// single slow operation on a busy machine just misses this once, so the cache keeps working under load.
func (s *Store) fail(tier, op string, err error) {
	if unreachable(err) {
		s.breaker.trip()
	}
	s.metrics.errors.WithLabelValues(tier, op).Inc()
	s.log.Debug("cache error", "tier", tier, "op", op, "err", err)
}
