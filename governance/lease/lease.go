// Package lease is an exclusive lease on a key, shared by every process that uses the same Redis (ADR 0081): the
// governance mutations hold one per dataset while they read its state, publish and wait for their event to be
// projected, so two mutations on one dataset never compute their lists from the same state.
//
// A lease is `SET key token NX PX ttl` with a random token, released by a compare-and-delete (a Lua script that
// deletes the key only while it still holds the token), so a holder whose lease expired never releases its
// successor's. A holder that does not release it (it crashed, or chose to keep it) loses it at ttl.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Poll is how often a waiting Acquire retries the SET.
const Poll = 25 * time.Millisecond

// KeyPrefix starts every lease's Redis key.
const KeyPrefix = "headwater:lease:"

var (
	// ErrBusy is a lease another holder kept for the whole wait.
	ErrBusy = errors.New("lease: held by another holder for the whole wait")
	// ErrUnavailable is a Redis that did not answer (or none configured): no lease was taken.
	ErrUnavailable = errors.New("lease: redis unavailable")
)

// Release gives a lease back (compare-and-delete: a lease that expired and was taken by another is left alone).
type Release func(ctx context.Context) error

// Redis takes leases in one Redis.
type Redis struct {
	rdb  *redis.Client
	ttl  time.Duration
	wait time.Duration
}

// New returns leases of ttl each, waited for at most wait; a nil rdb (Redis not configured) answers every Acquire
// ErrUnavailable.
func New(rdb *redis.Client, ttl, wait time.Duration) *Redis {
	return &Redis{rdb: rdb, ttl: ttl, wait: wait}
}

// TTL is how long a lease is held when it is not released.
func (r *Redis) TTL() time.Duration { return r.ttl }

// release deletes KEYS[1] only while it holds ARGV[1].
var release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Acquire takes the lease on key, waiting (polling every Poll) up to the wait for its holder to release it or for
// it to expire: ErrBusy when it is still held then, ErrUnavailable (wrapping Redis's error) when Redis fails.
func (r *Redis) Acquire(ctx context.Context, key string) (Release, error) {
	if r.rdb == nil {
		return nil, fmt.Errorf("%w: redis is not configured (redis.addr)", ErrUnavailable)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token, k := hex.EncodeToString(b[:]), KeyPrefix+key
	deadline := time.Now().Add(r.wait)
	for {
		ok, err := r.rdb.SetNX(ctx, k, token, r.ttl).Result()
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		case ok:
			return func(ctx context.Context) error {
				if err := release.Run(ctx, r.rdb, []string{k}, token).Err(); err != nil {
					return fmt.Errorf("%w: %w", ErrUnavailable, err)
				}
				return nil
			}, nil
		}
		if time.Now().After(deadline) {
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(Poll):
		}
	}
}
