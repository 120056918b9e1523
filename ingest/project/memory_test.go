package project

import (
	"testing"

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
