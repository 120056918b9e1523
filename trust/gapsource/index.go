package gapsource

import (
	"context"
	"sync"
	"time"

	"github.com/headwater-data/headwater/trust"
)

// ExpectedIndexTTL is how long the in-memory index of expected writers (every active expected job by expected
// output, with the reported jobs it matched and their latest event) serves the lineage gaps before it is read
// again. A request that finds it older serves it and starts one refresh in the background; a registration or
// retirement through this process (InventoryChanged) drops it, so the next answer reads it first. Other
// processes see a registration within the TTL (ADR 0034).
const ExpectedIndexTTL = time.Minute

// writerSnapshot is the index at one instant. Bounded by trust.MaxCachedExpected expected jobs: above it, too is
// set and every answer reads its expected writers from the store (ExpectedWritersOf), as before the index.
type writerSnapshot struct {
	at       time.Time
	rows     []trust.ExpectedRow // with their matches; never changed after the load
	byOutput map[string][]int32
	tooBig   bool
}

// writerIndex keeps the last snapshot, refreshing it at most once at a time. gen counts invalidations, so a
// refresh that started before one never installs what it read.
type writerIndex struct {
	mu         sync.Mutex
	snap       *writerSnapshot
	gen        uint64
	refreshing bool
}

// InventoryChanged drops the expected-writer index: the next lineage answer reads it again. The registry calls
// it after every registration that wrote and every retirement.
func (s *Source) InventoryChanged() {
	c := &s.writers
	c.mu.Lock()
	c.snap, c.gen = nil, c.gen+1
	c.mu.Unlock()
}

// writerIndex returns the snapshot, reading it when there is none and refreshing it in the background when it
// is older than ExpectedIndexTTL.
func (s *Source) writerIndex(ctx context.Context) (*writerSnapshot, error) {
	c := &s.writers
	c.mu.Lock()
	snap, gen := c.snap, c.gen
	stale := snap != nil && s.clock().Sub(snap.at) > ExpectedIndexTTL && !c.refreshing
	if stale {
		c.refreshing = true
	}
	c.mu.Unlock()
	if snap == nil {
		fresh, err := s.loadWriters(ctx)
		if err != nil {
			return nil, err
		}
		s.installWriters(fresh, gen, false)
		return fresh, nil
	}
	if stale {
		go s.refreshWriters(gen)
	}
	return snap, nil
}

func (s *Source) refreshWriters(gen uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fresh, err := s.loadWriters(ctx)
	if err != nil {
		fresh = nil
	}
	s.installWriters(fresh, gen, true)
}

// installWriters keeps fresh unless the index was invalidated since gen was read.
func (s *Source) installWriters(fresh *writerSnapshot, gen uint64, refresh bool) {
	c := &s.writers
	c.mu.Lock()
	defer c.mu.Unlock()
	if refresh {
		c.refreshing = false
	}
	if fresh != nil && c.gen == gen {
		c.snap = fresh
	}
}

// loadWriters reads every active expected job and the reported jobs it matches (one read each of the expected
// jobs, the match names and the dbt node jobs) and indexes them by expected output.
func (s *Source) loadWriters(ctx context.Context) (*writerSnapshot, error) {
	now := s.clock()
	rows, err := s.r.ExpectedJobs(ctx, trust.Filter{})
	if err != nil {
		return nil, err
	}
	if len(rows) > trust.MaxCachedExpected {
		return &writerSnapshot{at: now, tooBig: true}, nil
	}
	if rows, err = s.sig.WithMatches(ctx, rows); err != nil {
		return nil, err
	}
	snap := &writerSnapshot{at: now, rows: rows, byOutput: make(map[string][]int32, len(rows))}
	for i, e := range rows {
		for _, o := range e.Outputs {
			snap.byOutput[o] = append(snap.byOutput[o], int32(i))
		}
	}
	return snap, nil
}

// of returns the indexed expected jobs listing one of outputs, each once, in index order.
func (w *writerSnapshot) of(outputs []string) []trust.ExpectedRow {
	seen := map[int32]bool{}
	var out []trust.ExpectedRow
	for _, o := range outputs {
		for _, i := range w.byOutput[o] {
			if !seen[i] {
				seen[i] = true
				out = append(out, w.rows[i])
			}
		}
	}
	return out
}
