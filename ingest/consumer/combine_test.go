package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/project"
)

// fakeTx records the transactions a combiner runs; it fails every transaction holding an event whose id starts
// with "poison".
type fakeTx struct {
	mu    sync.Mutex
	txs   [][]project.Envelope
	block func(n int) // called with the transaction's number (1-based) before it "commits"
}

func (f *fakeTx) projection() projection {
	return projection{
		apply: func(ctx context.Context, envs []project.Envelope) error {
			f.mu.Lock()
			f.txs = append(f.txs, envs)
			n := len(f.txs)
			f.mu.Unlock()
			if f.block != nil {
				f.block(n)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for _, e := range envs {
				if strings.HasPrefix(e.Event.ID, "poison") {
					return errors.New("property value too large to index")
				}
			}
			return nil
		},
		healthy: func(context.Context) bool { return true },
		poison: func(e project.Envelope, err error) kafkaio.Message {
			return kafkaio.Message{Key: e.Event.ID, Value: []byte(err.Error())}
		},
		done: func([]project.Envelope) {},
		warn: func(string, ...any) {},
	}
}

func (f *fakeTx) sizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, tx := range f.txs {
		out = append(out, len(tx))
	}
	return out
}

func envsOf(principal, prefix string, n int) []project.Envelope {
	out := make([]project.Envelope, n)
	for i := range out {
		out[i] = project.Envelope{Principal: principal, Event: olevent.Event{ID: fmt.Sprintf("%s-%s-%d", prefix, principal, i)}}
	}
	return out
}

func testCombiner(maxEvents int, f *fakeTx) *combiner {
	return newCombiner(1, maxEvents, DefaultFairSlice, time.Now, f.projection())
}

// While one transaction runs, the batches of other partitions gather and go into the next one together, within
// the event limit.
func TestCombinerMergesWaitingBatches(t *testing.T) {
	release := make(chan struct{})
	f := &fakeTx{block: func(n int) {
		if n == 1 {
			<-release // the first transaction is slow
		}
	}}
	c := testCombiner(25, f)
	var wg sync.WaitGroup
	run := func(envs []project.Envelope) {
		defer wg.Done()
		if _, err := c.run(context.Background(), envs); err != nil {
			t.Error(err)
		}
	}
	wg.Add(1)
	go run(envsOf("p", "a", 10))
	waitFor(t, func() bool { return len(f.sizes()) == 1 })
	for _, b := range []string{"b", "c", "d"} {
		wg.Add(1)
		go run(envsOf("p", b, 10))
	}
	waitFor(t, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.lanes["p"].items) == 30 })
	close(release)
	wg.Wait()
	if s := f.sizes(); len(s) != 3 || s[0] != 10 || s[1] != 25 || s[2] != 5 {
		t.Fatalf("transactions of %v events, want [10 25 5] (waiting batches merged up to the limit)", s)
	}
}

// When the leading claim's session ends mid-transaction, the other claims' events are projected by another
// leader instead of failing with the leader's cancellation.
func TestCombinerRequeuesWhenTheLeaderLeaves(t *testing.T) {
	started := make(chan struct{})
	leaderCtx, cancel := context.WithCancel(context.Background())
	f := &fakeTx{block: func(n int) {
		if n == 1 {
			close(started)
			<-leaderCtx.Done()
		}
	}}
	c := testCombiner(100, f)
	follower := &queued{ctx: context.Background(), pending: 3, done: make(chan error, 1)}
	c.enqueue(follower, envsOf("p", "f", 3)) // queued before the leader starts its transaction
	leaderErr := make(chan error, 1)
	go func() { _, err := c.run(leaderCtx, envsOf("p", "l", 5)); leaderErr <- err }()
	<-started
	cancel()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	go func() { _, _ = c.run(context.Background(), envsOf("p", "n", 1)) }() // the next claim leads
	select {
	case err := <-follower.done:
		if err != nil {
			t.Fatalf("follower got %v, want its events projected by the next leader", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower's events were never projected")
	}
}

// A failed transaction is isolated in groups of 64, 8 and 1: every event is re-run at most three times whatever
// the batch size, each poison event is quarantined, and no good event is.
func TestCombinerIsolatesPoisonInBoundedReRuns(t *testing.T) {
	for _, tc := range []struct{ good, poison int }{{2000, 1}, {100, 50}, {7, 1}, {1, 1}} {
		f := &fakeTx{}
		c := testCombiner(2000, f)
		envs := append(envsOf("p", "good", tc.good), envsOf("p", "poison", tc.poison)...)
		// spread the poison events through the batch
		for i := range tc.poison {
			j := (i*len(envs))/tc.poison + 1
			if j < len(envs)-tc.poison+i {
				envs[j], envs[tc.good+i] = envs[tc.good+i], envs[j]
			}
		}
		q, err := c.run(context.Background(), envs)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) != tc.poison {
			t.Errorf("%+v: %d quarantined, want %d", tc, len(q), tc.poison)
		}
		for _, m := range q {
			if !strings.HasPrefix(m.Key, "poison") {
				t.Errorf("%+v: good event %s quarantined", tc, m.Key)
			}
		}
		runs := map[string]int{}
		for _, tx := range f.txs {
			for _, e := range tx {
				runs[e.Event.ID]++
			}
		}
		for id, n := range runs {
			if n > 1+len(isolationGroups) {
				t.Errorf("%+v: %s in %d transactions, want at most %d", tc, id, n, 1+len(isolationGroups))
			}
		}
		t.Logf("%d good + %d poison: %d transactions", tc.good, tc.poison, len(f.txs))
	}
}

// A suspect group is projected alone: another producer's events never share a transaction with a suspect, so a
// poison event costs other producers at most the one transaction that first failed.
func TestCombinerNeverMixesSuspectsWithOtherProducers(t *testing.T) {
	f := &fakeTx{}
	c := testCombiner(2000, f)
	var wg sync.WaitGroup
	for _, envs := range [][]project.Envelope{append(envsOf("a", "good", 30), envsOf("a", "poison", 3)...), envsOf("b", "good", 5)} {
		wg.Go(func() {
			if _, err := c.run(context.Background(), envs); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	failedWithB := 0
	for _, tx := range f.txs {
		principals := map[string]bool{}
		poison := false
		for _, e := range tx {
			principals[e.Principal] = true
			poison = poison || strings.HasPrefix(e.Event.ID, "poison")
		}
		if poison && principals["b"] {
			failedWithB++
		}
	}
	if failedWithB > 1 {
		t.Fatalf("b's events were in %d failing transactions, want at most 1: %v", failedWithB, f.sizes())
	}
}

// While two producers are active, a backlogged producer's transactions take one share (about FairSlice of
// projection time) and alternate with the light producer's own; a lone producer gets whole transactions.
func TestCombinerSharesTransactionsBetweenActiveProducers(t *testing.T) {
	f := &fakeTx{}
	c := testCombiner(2000, f)
	c.perEvent = 10 * time.Millisecond // share: 500 ms / 10 ms = 50 events
	a := &queued{ctx: context.Background(), pending: 500, done: make(chan error, 1)}
	c.enqueue(a, envsOf("a", "good", 500))
	tx, _ := c.take()
	if len(tx) != 500 {
		t.Fatalf("a lone producer got %d events, want all 500", len(tx))
	}
	c.requeue(tx, func(*item) int { return 0 })
	b := &queued{ctx: context.Background(), pending: 5, done: make(chan error, 1)}
	c.enqueue(b, envsOf("b", "good", 5))
	var got []map[string]int
	for range 3 {
		per := map[string]int{}
		tx, _ = c.take()
		for _, it := range tx {
			per[it.env.Principal]++
		}
		got = append(got, per)
	}
	// a's share alone, then b's events in their own small transaction, then a's next share
	if fmt.Sprint(got) != "[map[a:50] map[b:5] map[a:50]]" {
		t.Fatalf("transactions %v, want a's share of 50 alone, b's 5 alone, a's next 50", got)
	}
}

// A light producer's events do not wait for a backlogged producer's share: they go in an express transaction
// while the share is still in Neo4j.
func TestCombinerExpressesLightProducersPastABackloggedOne(t *testing.T) {
	release := make(chan struct{})
	f := &fakeTx{block: func(n int) {
		if n == 1 {
			<-release // the backlogged producer's first share is slow
		}
	}}
	c := testCombiner(2000, f)
	c.perEvent = 10 * time.Millisecond // share: 50 events
	c.mu.Lock()
	c.lane("b").lastSeen = time.Now() // b was active recently, so a's first transaction is one share
	c.mu.Unlock()
	heavy := make(chan error, 1)
	go func() { _, err := c.run(context.Background(), envsOf("a", "good", 500)); heavy <- err }()
	waitFor(t, func() bool { return len(f.sizes()) == 1 })
	light := make(chan error, 1)
	go func() { _, err := c.run(context.Background(), envsOf("b", "good", 5)); light <- err }()
	select {
	case err := <-light:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the light producer's events waited for the backlogged producer's share")
	}
	close(release)
	if err := <-heavy; err != nil {
		t.Fatal(err)
	}
	if s := f.sizes(); s[0] != 50 || s[1] != 5 {
		t.Fatalf("transactions %v, want a's share of 50, then b's 5 beside it", s)
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
