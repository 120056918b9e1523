package lease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/internal/testenv"
)

// The lease against the real Redis (HEADWATER_REDIS_ADDR).

func client(t *testing.T) *redis.Client {
	t.Helper()
	testenv.Servers(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func testKey(t *testing.T) string { return t.Name() + "-" + time.Now().Format("150405.000000000") }

// TestLeaseExcludes: while one holder has the lease another waits for the whole wait and gets ErrBusy; once it is
// released the other gets it at once. Many holders racing hold it one at a time.
func TestLeaseExcludes(t *testing.T) {
	ctx := context.Background()
	l := New(client(t), 5*time.Second, 200*time.Millisecond)
	key := testKey(t)
	rel, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := l.Acquire(ctx, key, nil); !errors.Is(err, ErrBusy) || time.Since(t0) < 200*time.Millisecond {
		t.Fatalf("second Acquire while held: %v after %v, want ErrBusy after the wait", err, time.Since(t0))
	}
	if err := rel.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rel2, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	_ = rel2.Release(ctx)

	long := New(l.rdb, 5*time.Second, 10*time.Second)
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rel, err := long.Acquire(ctx, key, nil)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			if err := rel.Release(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d holders at once, want 1", most.Load())
	}
}

// die stops a holder's renewal without releasing: the process died.
func (l *Lease) die() {
	l.mu.Lock()
	l.stop()
	l.mu.Unlock()
}

// TestLeaseExpiresAndReleaseIsTheHolders: a lease whose holder stops renewing it (died) expires at its ttl; a
// holder whose lease expired and was taken by another does not release the other's (compare-and-delete), and
// learns it lost it.
func TestLeaseExpiresAndReleaseIsTheHolders(t *testing.T) {
	ctx := context.Background()
	l := New(client(t), 300*time.Millisecond, 2*time.Second)
	key := testKey(t)
	stale, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	stale.die()
	t0 := time.Now()
	rel, err := l.Acquire(ctx, key, nil) // waits for the expiry
	if err != nil || time.Since(t0) < 250*time.Millisecond {
		t.Fatalf("Acquire of a dead holder's lease: %v after %v, want it after the ttl", err, time.Since(t0))
	}
	if err := stale.Pend(ctx, "ev"); !errors.Is(err, ErrLost) {
		t.Fatalf("Pend of a lease taken by another: %v, want ErrLost", err)
	}
	if err := stale.Release(ctx); err != nil { // the first holder's release must not free the second's lease
		t.Fatal(err)
	}
	short := New(l.rdb, time.Second, 50*time.Millisecond)
	if _, err := short.Acquire(ctx, key, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("the stale holder's release freed the new holder's lease: %v", err)
	}
	_ = rel.Release(ctx)
}

// TestLeaseRenewedWhileHeld: a holder slower than the ttl keeps its lease (renewed every ttl/3): another waiting
// 4 ttl is busy, and the holder has not lost it.
func TestLeaseRenewedWhileHeld(t *testing.T) {
	ctx := context.Background()
	l := New(client(t), 200*time.Millisecond, 800*time.Millisecond)
	key := testKey(t)
	held, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, key, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("Acquire while a slow holder renews: %v, want ErrBusy", err)
	}
	if err := held.Err(); err != nil {
		t.Fatal(err)
	}
	if err := held.Pend(ctx, "ev"); err != nil {
		t.Fatalf("Pend after 4 ttl held: %v", err)
	}
	_ = held.Release(ctx)
}

// TestLeasePendingTakenOverOnceSettled: a pending lease is held past its holder (no renewal, the long ttl Hold
// gave) until the work it names is settled: a waiter whose Settled says "not done" is busy for the whole wait
// (asked with the payload), one whose Settled says "done" takes it over; the old holder's late release leaves the
// new holder's lease alone, and metrics count all of it.
func TestLeasePendingTakenOverOnceSettled(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	l := New(client(t), 200*time.Millisecond, 700*time.Millisecond).WithMetrics(m)
	key := testKey(t)
	first, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Pend(ctx, "ev-1 with spaces"); err != nil {
		t.Fatal(err)
	}
	if err := first.Hold(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	first.Leave()
	first.die() // the holder answered, or died: the lease is the event's now
	var asked []string
	var done atomic.Bool
	settled := func(_ context.Context, payload string) (bool, error) {
		asked = append(asked, payload)
		return done.Load(), nil
	}
	if _, err := l.Acquire(ctx, key, settled); !errors.Is(err, ErrBusy) || len(asked) == 0 || asked[0] != "ev-1 with spaces" {
		t.Fatalf("Acquire of a pending lease whose work is not done (3 ttl later): %v, asked %q", err, asked)
	}
	done.Store(true)
	next, err := l.Acquire(ctx, key, settled)
	if err != nil {
		t.Fatalf("Acquire once settled: %v", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := New(l.rdb, time.Second, 50*time.Millisecond).Acquire(ctx, key, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("the pending holder's late release freed the taker's lease: %v", err)
	}
	_ = next.Release(ctx)
	for name, want := range map[string]float64{"acquired": 2, "taken_over": 1, "busy": 1, "left_pending": 1, "lost": 0} {
		if got := testutil.ToFloat64(map[string]prometheus.Collector{"acquired": m.nAcquired, "taken_over": m.nTakenOver,
			"busy": m.nBusy, "left_pending": m.nLeftPending, "lost": m.nLost}[name]); got != want {
			t.Errorf("headwater_governance_lease_%s_total = %v, want %v", name, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.wait); n != 2 { // the acquired and busy series
		t.Errorf("wait histogram series %d, want 2", n)
	}
}

// TestLeaseLostIsCounted: a lease whose key was taken from under its holder (deleted and set by another) is
// found lost at the next renewal: Err and Pend say ErrLost, and lost_total counts it once.
func TestLeaseLostIsCounted(t *testing.T) {
	ctx := context.Background()
	m := NewMetrics(prometheus.NewRegistry())
	l := New(client(t), 150*time.Millisecond, time.Second).WithMetrics(m)
	key := testKey(t)
	held, err := l.Acquire(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.rdb.Set(ctx, KeyPrefix+key, "someone else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if !errors.Is(held.Err(), ErrLost) || !errors.Is(held.Pend(ctx, "ev"), ErrLost) || testutil.ToFloat64(m.nLost) != 1 {
		t.Fatalf("Err %v, lost_total %v", held.Err(), testutil.ToFloat64(m.nLost))
	}
	_ = l.rdb.Del(ctx, KeyPrefix+key)
}

// TestLeaseWithoutRedis: Redis unreachable or not configured is ErrUnavailable, never a lease.
func TestLeaseWithoutRedis(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer func() { _ = down.Close() }()
	for name, l := range map[string]*Redis{"unreachable": New(down, time.Second, time.Second), "none": New(nil, time.Second, time.Second)} {
		if _, err := l.Acquire(context.Background(), "k", nil); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
	}
}
