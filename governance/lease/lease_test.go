package lease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	rel, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := l.Acquire(ctx, key); !errors.Is(err, ErrBusy) || time.Since(t0) < 200*time.Millisecond {
		t.Fatalf("second Acquire while held: %v after %v, want ErrBusy after the wait", err, time.Since(t0))
	}
	if err := rel(ctx); err != nil {
		t.Fatal(err)
	}
	rel2, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	_ = rel2(ctx)

	long := New(l.rdb, 5*time.Second, 10*time.Second)
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rel, err := long.Acquire(ctx, key)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			if err := rel(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d holders at once, want 1", most.Load())
	}
}

// TestLeaseExpiresAndReleaseIsTheHolders: a lease not released expires at its ttl; a holder whose lease expired
// and was taken by another does not release the other's (compare-and-delete).
func TestLeaseExpiresAndReleaseIsTheHolders(t *testing.T) {
	ctx := context.Background()
	l := New(client(t), 300*time.Millisecond, 2*time.Second)
	key := testKey(t)
	stale, err := l.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	rel, err := l.Acquire(ctx, key) // waits for the expiry
	if err != nil || time.Since(t0) < 250*time.Millisecond {
		t.Fatalf("Acquire of a kept lease: %v after %v, want it after the ttl", err, time.Since(t0))
	}
	if err := stale(ctx); err != nil { // the first holder's release must not free the second's lease
		t.Fatal(err)
	}
	short := New(l.rdb, time.Second, 50*time.Millisecond)
	if _, err := short.Acquire(ctx, key); !errors.Is(err, ErrBusy) {
		t.Fatalf("the stale holder's release freed the new holder's lease: %v", err)
	}
	_ = rel(ctx)
}

// TestLeaseWithoutRedis: Redis unreachable or not configured is ErrUnavailable, never a lease.
func TestLeaseWithoutRedis(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer func() { _ = down.Close() }()
	for name, l := range map[string]*Redis{"unreachable": New(down, time.Second, time.Second), "none": New(nil, time.Second, time.Second)} {
		if _, err := l.Acquire(context.Background(), "k"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
	}
}
