package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/project"
)

func batchOf(n int) prepared { return prepared{envs: make([]project.Envelope, n)} }

// While one transaction runs, the batches of other partitions gather and go into the next one together, within
// the event limit.
func TestCombinerMergesWaitingBatches(t *testing.T) {
	c := newCombiner(1, 25)
	var mu sync.Mutex
	var sizes []int
	release := make(chan struct{})
	project := func(_ context.Context, p prepared) error {
		mu.Lock()
		sizes = append(sizes, len(p.envs))
		first := len(sizes) == 1
		mu.Unlock()
		if first {
			<-release // the first transaction is slow
		}
		return nil
	}
	var wg sync.WaitGroup
	run := func(n int) {
		defer wg.Done()
		if err := c.run(context.Background(), batchOf(n), project); err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go run(10)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
	for _, n := range []int{10, 10, 10} {
		wg.Add(1)
		go run(n)
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.queue) == 3 })
	close(release)
	wg.Wait()
	if len(sizes) != 3 || sizes[0] != 10 || sizes[1] != 20 || sizes[2] != 10 {
		t.Fatalf("transactions of %v events, want [10 20 10] (two waiting batches merged, the third over the limit)", sizes)
	}
}

// When the leading claim's session ends mid-transaction, the other claims' batches are projected by another
// leader instead of failing with the leader's cancellation.
func TestCombinerRequeuesWhenTheLeaderLeaves(t *testing.T) {
	c := newCombiner(1, 100)
	leaderCtx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	calls := 0
	project := func(ctx context.Context, p prepared) error {
		calls++
		if calls == 1 {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	// queue a follower before the leader starts its transaction
	c.queue = append(c.queue, &queued{ctx: context.Background(), p: batchOf(3), done: make(chan error, 1)})
	follower := c.queue[0]
	leaderErr := make(chan error, 1)
	go func() { leaderErr <- c.run(leaderCtx, batchOf(5), project) }()
	<-started
	cancel()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	go func() { _ = c.run(context.Background(), batchOf(1), project) }() // the next claim leads
	select {
	case err := <-follower.done:
		if err != nil {
			t.Fatalf("follower got %v, want its batch projected by the next leader", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower's batch was never projected")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached")
}
