package gapsource

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust"
)

// fakeReader serves expected jobs from memory and counts the reads of them (pure unit logic: the index's
// refresh, invalidation and bound; the reads themselves are tested against Neo4j in trust and resolvers).
type fakeReader struct {
	trust.Reader // the signals' other reads are not used here
	mu           sync.Mutex
	rows         []trust.ExpectedRow
	reads        atomic.Int64
	direct       atomic.Int64
}

func (f *fakeReader) set(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = nil
	for _, n := range names {
		f.rows = append(f.rows, trust.ExpectedRow{Key: n, Namespace: "ns", Name: n, IntervalMs: 3_600_000, Outputs: []string{"ns|x"}})
	}
}

func (f *fakeReader) ExpectedJobs(context.Context, trust.Filter) ([]trust.ExpectedRow, error) {
	f.reads.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]trust.ExpectedRow(nil), f.rows...), nil
}

func (f *fakeReader) ExpectedWritersOf(context.Context, []string) ([]trust.ExpectedRow, error) {
	f.direct.Add(1)
	return nil, nil
}

func (f *fakeReader) JobsNamed(context.Context, [][2]string) ([]trust.ReportedJob, error) {
	return nil, nil
}

func (f *fakeReader) DbtJobs(context.Context, string) ([]trust.ReportedJob, error) { return nil, nil }

func (f *fakeReader) JobProducers(context.Context, []string) (map[string][]JobProducer, error) {
	return nil, nil
}

func (f *fakeReader) Activity(context.Context, string, int64) ([]trust.ActivityRow, error) {
	return nil, nil
}

func writerNames(t *testing.T, s *Source) string {
	t.Helper()
	got, err := s.ExpectedWriters(t.Context(), authz.Principal{Subject: "t"}, []string{"ns|x"})
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, g := range got {
		out += g.Name + " "
	}
	return out
}

// The index is read once, serves answers without reading while it is younger than ExpectedIndexTTL, is read
// again at once after InventoryChanged, is refreshed in the background once older (the old one served
// meanwhile), and keeps nothing above trust.MaxCachedExpected (every answer then reads its writers).
func TestWriterIndexRefreshInvalidationAndBound(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	r := &fakeReader{}
	sig, err := trust.NewService(r, nil, trust.Config{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	s := New(sig, r, clock)
	r.set("a")
	if got := writerNames(t, s); got != "a " || r.reads.Load() != 1 {
		t.Fatalf("first answer: %q after %d reads", got, r.reads.Load())
	}
	r.set("b")
	if got := writerNames(t, s); got != "a " || r.reads.Load() != 1 {
		t.Fatalf("within the TTL: %q after %d reads, want the index and no read", got, r.reads.Load())
	}
	s.InventoryChanged()
	if got := writerNames(t, s); got != "b " || r.reads.Load() != 2 {
		t.Fatalf("after a registration: %q after %d reads", got, r.reads.Load())
	}
	r.set("c")
	now.Add(int64(ExpectedIndexTTL + time.Second))
	if got := writerNames(t, s); got != "b " {
		t.Fatalf("past the TTL the old index is served while it refreshes: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for writerNames(t, s) != "c " {
		if time.Now().After(deadline) {
			t.Fatalf("the background refresh never installed: reads %d", r.reads.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	many := make([]string, trust.MaxCachedExpected+1)
	for i := range many {
		many[i] = fmt.Sprintf("j%d", i)
	}
	r.set(many...)
	s.InventoryChanged()
	writerNames(t, s)
	writerNames(t, s)
	if r.direct.Load() != 2 {
		t.Fatalf("above MaxCachedExpected every answer reads its writers: %d direct reads", r.direct.Load())
	}
}
