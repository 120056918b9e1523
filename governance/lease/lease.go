// Package lease is an exclusive lease on a key, shared by every process that uses the same Redis (ADR 0081, ADR
// 0088): the governance mutations hold one per dataset while they read its state, publish and wait for their event
// to be projected, so two mutations on one dataset never compute their lists from the same state.
//
// A lease is `SET key token NX PX ttl` with a random token. While held it is renewed every ttl/RenewDivisor by a
// compare-and-expire (a Lua script that extends the key only while it still holds the value), so a holder slower
// than ttl keeps it; a holder that dies loses it at ttl. Released by a compare-and-delete, so a holder whose lease
// expired never releases its successor's.
//
// A holder about to hand its work to a slower process (the governance mutation publishing an event the consumer
// projects later) turns the lease into a pending one (Pend): the key then names that work (its payload) and expires
// only after the long ttl Pend is given, whether or not the holder lives. Whoever waits for the key asks the
// caller's Settled whether the named work is done, and once it is takes the lease over (a compare-and-set), so the
// work's result is in force before the next holder reads; the original holder, if it sees the work done first,
// releases it.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// Poll is how often a waiting Acquire retries the SET.
	Poll = 25 * time.Millisecond
	// SettlePoll is how often a waiting Acquire asks whether a pending lease's work is settled.
	SettlePoll = 100 * time.Millisecond
	// RenewDivisor: a held lease is renewed every ttl/RenewDivisor, so two renewals can fail before it lapses.
	RenewDivisor = 3
	// KeyPrefix starts every lease's Redis key.
	KeyPrefix = "headwater:lease:"
	// pendingPrefix starts a pending lease's value: "pending <token> <payload>".
	pendingPrefix = "pending "
)

var (
	// ErrBusy is a lease another holder kept for the whole wait.
	ErrBusy = errors.New("lease: held by another holder for the whole wait")
	// ErrUnavailable is a Redis that did not answer (or none configured): no lease was taken.
	ErrUnavailable = errors.New("lease: redis unavailable")
	// ErrLost is a lease that lapsed or was taken by another while its holder still thought it held it.
	ErrLost = errors.New("lease: lost (lapsed, or taken over) while held")
)

// Settled answers whether the work a pending lease names (its payload) is done, so the lease may be taken over.
type Settled func(ctx context.Context, payload string) (bool, error)

// Redis takes leases in one Redis.
type Redis struct {
	rdb  *redis.Client
	ttl  time.Duration
	wait time.Duration
	m    *Metrics
}

// New returns leases of ttl each (renewed while held), waited for at most wait; a nil rdb (Redis not configured)
// answers every Acquire ErrUnavailable.
func New(rdb *redis.Client, ttl, wait time.Duration) *Redis {
	return &Redis{rdb: rdb, ttl: ttl, wait: wait}
}

// WithMetrics counts acquisitions, waits, busy and lost leases on m; it returns r for chaining.
func (r *Redis) WithMetrics(m *Metrics) *Redis {
	r.m = m
	return r
}

// TTL is how long a lease lasts once its holder stops renewing it.
func (r *Redis) TTL() time.Duration { return r.ttl }

var (
	// release deletes KEYS[1] only while it holds ARGV[1].
	release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
	// renew extends KEYS[1] to ARGV[2] ms only while it holds ARGV[1].
	renew = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	// swap sets KEYS[1] to ARGV[2] for ARGV[3] ms only while it holds ARGV[1].
	swap = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3]) return 1 end return 0`)
)

// Acquire takes the lease on key, waiting (polling every Poll) up to the wait for its holder to release it, for it
// to expire, or, when it is pending, for settled to say its work is done (asked every SettlePoll; a nil settled
// waits for the release or the expiry): ErrBusy when it is still held then, ErrUnavailable (wrapping Redis's
// error) when Redis fails. The lease is renewed until Release or Pend.
func (r *Redis) Acquire(ctx context.Context, key string, settled Settled) (*Lease, error) {
	if r.rdb == nil {
		r.m.unavailable()
		return nil, fmt.Errorf("%w: redis is not configured (redis.addr)", ErrUnavailable)
	}
	l := &Lease{r: r, key: KeyPrefix + key, token: newToken(), done: make(chan struct{})}
	l.value = l.token
	start := time.Now()
	deadline := start.Add(r.wait)
	var lastSettle time.Time
	for {
		ok, err := r.rdb.SetNX(ctx, l.key, l.token, r.ttl).Result()
		if err == nil && !ok && settled != nil && time.Since(lastSettle) >= SettlePoll {
			lastSettle = time.Now()
			ok, err = r.takeOver(ctx, l, settled)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			r.m.unavailable()
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		case ok:
			r.m.acquired(time.Since(start))
			go l.renewing()
			return l, nil
		}
		if time.Now().After(deadline) {
			r.m.busy(time.Since(start))
			return nil, ErrBusy
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(Poll):
		}
	}
}

// takeOver takes a pending lease whose work settled says is done (a compare-and-set on the value read, so one
// waiter wins); false while the key is held, not pending, or its work is not done.
func (r *Redis) takeOver(ctx context.Context, l *Lease, settled Settled) (bool, error) {
	v, err := r.rdb.Get(ctx, l.key).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil // released meanwhile: the next SET takes it
	}
	if err != nil {
		return false, err
	}
	payload, ok := pendingPayload(v)
	if !ok {
		return false, nil
	}
	done, err := settled(ctx, payload)
	if err != nil || !done {
		return false, nil //nolint:nilerr // a status not read is not settled: keep waiting (ErrBusy at the end)
	}
	n, err := swap.Run(ctx, r.rdb, []string{l.key}, v, l.token, r.ttl.Milliseconds()).Int()
	if err != nil {
		return false, err
	}
	if n == 1 {
		r.m.tookOver()
	}
	return n == 1, nil
}

func pendingPayload(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, pendingPrefix)
	if !ok {
		return "", false
	}
	_, payload, ok := strings.Cut(rest, " ")
	return payload, ok
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Lease is one held lease.
type Lease struct {
	r     *Redis
	key   string
	token string

	mu      sync.Mutex
	value   string // what the key holds while the lease is ours: the token, or the pending value
	done    chan struct{}
	stopped bool
	lost    bool
}

// renewing extends the lease every ttl/RenewDivisor until stopped; a renewal that finds the key not ours marks
// the lease lost (a renewal Redis fails is retried at the next tick: the lease lapses only at ttl).
func (l *Lease) renewing() {
	t := time.NewTicker(max(l.r.ttl/RenewDivisor, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.stopped {
			l.mu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.r.ttl/RenewDivisor)
		n, err := renew.Run(ctx, l.r.rdb, []string{l.key}, l.value, l.r.ttl.Milliseconds()).Int()
		cancel()
		if err == nil && n == 0 {
			l.markLost()
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// stop ends the renewal (l.mu held).
func (l *Lease) stop() {
	if !l.stopped {
		l.stopped = true
		close(l.done)
	}
}

// markLost records the lease lost once (l.mu held).
func (l *Lease) markLost() {
	if !l.lost {
		l.lost = true
		l.r.m.lostOne()
	}
	l.stop()
}

// Err is ErrLost once a renewal found the lease not ours, else nil.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return ErrLost
	}
	return nil
}

// Pend turns the held lease into a pending one naming payload, still renewed: the caller is about to start the
// work payload names (publish the event). Once the work is under way, Hold keeps the lease for it without this
// process. ErrLost when the lease is no longer ours (then nothing was changed: the caller must not start the work).
func (l *Lease) Pend(ctx context.Context, payload string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return ErrLost
	}
	v := pendingPrefix + l.token + " " + payload
	n, err := swap.Run(ctx, l.r.rdb, []string{l.key}, l.value, v, l.r.ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if n == 0 {
		l.markLost()
		return ErrLost
	}
	l.value = v
	return nil
}

// Hold stops renewing the pending lease and keeps it for ttl: from now on it is held by its work, not by this
// process (which may answer, or die), until Release or a waiter whose Settled says the work is done.
func (l *Lease) Hold(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return ErrLost
	}
	l.stop()
	n, err := renew.Run(ctx, l.r.rdb, []string{l.key}, l.value, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if n == 0 {
		l.markLost()
		return ErrLost
	}
	return nil
}

// Release gives the lease back (compare-and-delete: a lease that expired or was taken over is left alone).
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	l.stop()
	v := l.value
	l.mu.Unlock()
	if err := release.Run(ctx, l.r.rdb, []string{l.key}, v).Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// Leave leaves a pending lease to its work: the holder answers without waiting longer, and the lease is settled
// by the next waiter (or expires at the ttl Pend gave). Counted in headwater_governance_lease_left_pending_total.
func (l *Lease) Leave() { l.r.m.pendingLeft() }
