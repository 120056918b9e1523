package project

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/foldstate"
)

// A fold state bounded by fewer bytes than one dataset's state holds (every state falls due beyond the bound, is
// saved and evicted, and is reloaded lazily when touched again) and a recent-events cache with room for no event
// project the same graph as the defaults, from a shuffled stream with source positions.
func TestMemoryBoundsBelowOneStateProjectTheSameGraph(t *testing.T) {
	s := newScen(t)
	evs := richHistory(s)
	s.apply(evs...)
	want := s.dump()
	s.wipe()
	p := s.newProjector()
	p.SetMemoryBounds(MemoryBounds{FoldStateBytes: 1, RecentEventsBytes: 1})
	src := newSource(s, "tiny")
	for _, b := range shuffledBatches(evs, 7) {
		s.applyWith(p, src.append(s, b...))
		if n := p.fold.cache.Len(); n > len(b)*4+1 {
			t.Fatalf("the fold state holds %d entries under a 1-byte bound", n)
		}
	}
	if got := s.dump(); got != want {
		t.Fatalf("a 1-byte bound projects another graph:\n%s", diffLines(want, got))
	}
	if n := testutil.ToFloat64(p.fold.saves.WithLabelValues("due")); n == 0 {
		t.Fatal("no state fell due beyond the bound: the eviction path was not taken")
	}
	if n, _ := p.recent.held(); n != 0 {
		t.Fatalf("the recent-events cache holds %d events under a 1-byte bound", n)
	}
}

func TestSetMemoryBoundsDefaults(t *testing.T) {
	s := newScen(t)
	p := s.newProjector()
	if p.fold.cache.MaxBytes() != foldstate.DefaultMaxBytes || p.recent.maxBytes != RecentEventsMaxBytes {
		t.Fatalf("new projector's bounds %d, %d", p.fold.cache.MaxBytes(), p.recent.maxBytes)
	}
	p.SetMemoryBounds(MemoryBounds{FoldStateBytes: 64 << 20, RecentEventsBytes: 32 << 20})
	if p.fold.cache.MaxBytes() != 64<<20 || p.recent.maxBytes != 32<<20 {
		t.Fatalf("bounds after SetMemoryBounds %d, %d", p.fold.cache.MaxBytes(), p.recent.maxBytes)
	}
	p.SetMemoryBounds(MemoryBounds{})
	if p.fold.cache.MaxBytes() != foldstate.DefaultMaxBytes || p.recent.maxBytes != RecentEventsMaxBytes {
		t.Fatalf("zero bounds take the defaults: %d, %d", p.fold.cache.MaxBytes(), p.recent.maxBytes)
	}
}

// A transaction saving due states leaves out those another transaction in progress holds (it would wait for that
// one's commit under the dataset's lock, then find the stamp moved), and holds what it takes, so two transactions
// never save one state at once; a held state falls to the next transaction once its holder settles.
func TestDueSavesLeaveStatesAnotherTransactionHolds(t *testing.T) {
	f := newFoldState(foldstate.DefaultMaxBytes)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, k := range []string{"ds_a", "ds_b"} {
		e := foldstate.NewEntry(k, &dsCached{st: smallState(1)}, 1, false).
			Successor(&dsCached{st: smallState(2)}, 2, false, t0, []foldstate.Pos{{Part: "events/0", Offset: 5}})
		f.cache.Put(e)
	}
	now := t0.Add(2 * foldstate.SnapshotEvery)
	share := &foldTx{works: map[string]*dsWork{}}
	f.hold(share, []string{"ds_a"}) // a backlogged producer's transaction has ds_a in its work
	express := &foldTx{works: map[string]*dsWork{}}
	if got := entryKeys(f.dueToSave(express, now)); len(got) != 1 || got[0] != "ds_b" {
		t.Fatalf("due saves of a transaction beside the one holding ds_a: %v, want [ds_b]", got)
	}
	third := &foldTx{works: map[string]*dsWork{}}
	if got := f.dueToSave(third, now); len(got) != 0 {
		t.Fatalf("a third transaction saves %v, held by the other two", entryKeys(got))
	}
	f.settle(share, nil)
	f.settle(express, nil)
	if got := entryKeys(f.dueToSave(third, now)); len(got) != 2 {
		t.Fatalf("once both settled the next transaction saves %v, want both", got)
	}
	f.settle(third, nil)
	if len(f.held) != 0 {
		t.Fatalf("holds left after every transaction settled: %v", f.held)
	}
}

func entryKeys(es []*dsEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	slices.Sort(out)
	return out
}
