package schedule

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// The lease in real Neo4j: of many processes racing for a free or expired lease exactly one wins; the holder
// renews it; nobody takes it before it expires; anybody may after; a release frees it at once; the outcome is
// kept on it for every process to read.
func TestNeo4jLeaseHasOneHolder(t *testing.T) {
	store := testenv.Store(t)
	leases, ctx := Neo4jLeases{Store: store}, context.Background()
	cat := "lease-" + testenv.Namespace(t)
	race := func(ttl time.Duration) map[string]bool {
		var mu sync.Mutex
		won := map[string]bool{}
		var wg sync.WaitGroup
		for i := range 8 {
			holder := fmt.Sprintf("p%d", i)
			wg.Go(func() {
				l, err := leases.Acquire(ctx, cat, holder, ttl)
				if err != nil {
					t.Error(err)
					return
				}
				if l.Holder == holder {
					mu.Lock()
					won[holder] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return won
	}
	// The node exists first (MERGE of a new node by several transactions at once is what the unique constraint on
	// CatalogSyncLease.catalog settles; schema version 9).
	if _, err := leases.Acquire(ctx, cat, "creator", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	won := race(2 * time.Second)
	if len(won) != 1 {
		t.Fatalf("%d processes won an expired lease at once: %v", len(won), won)
	}
	var holder string
	for h := range won {
		holder = h
	}
	if l, _ := leases.Acquire(ctx, cat, "other", time.Minute); l.Holder != holder {
		t.Fatalf("another took a live lease: %+v", l)
	}
	if l, _ := leases.Acquire(ctx, cat, holder, 300*time.Millisecond); l.Holder != holder {
		t.Fatalf("the holder could not renew: %+v", l)
	}
	if err := leases.Report(ctx, cat, holder, time.UnixMilli(1_700_000_000_000), "catalog answered 503"); err != nil {
		t.Fatal(err)
	}
	if err := leases.Report(ctx, cat, "other", time.UnixMilli(1_700_000_000_000), ""); err != nil { // not the holder: ignored
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	l, err := leases.Acquire(ctx, cat, "other", time.Minute)
	if err != nil || l.Holder != "other" {
		t.Fatalf("an expired lease was not taken over: %+v %v", l, err)
	}
	if l.FailingSince.UnixMilli() != 1_700_000_000_000 || l.LastError != "catalog answered 503" || !l.LastSuccess.IsZero() {
		t.Errorf("the outcome on the lease: %+v", l)
	}
	if err := leases.Release(ctx, cat, "other"); err != nil {
		t.Fatal(err)
	}
	if l, _ := leases.Acquire(ctx, cat, holder, time.Minute); l.Holder != holder {
		t.Errorf("a released lease was not free: %+v", l)
	}
}
