package gapsource

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/headwater-data/headwater/trust"

	"github.com/headwater-data/headwater/trust/rules"
)

// ProducerHealthTTL is how long one read of every producer's activity (the quiet-producer rule over the
// lookback) is reused by the lineage gaps before it is read again. A request that finds it older serves it and
// starts one refresh in the background; only the first request of a process waits for the read.
const ProducerHealthTTL = time.Minute

// ProducerOf is the producer principal that sent the latest run's events of some of an answer's jobs, and
// whether it went quiet (the quietProducers rule: no event for longer than its P95 gap times its factor, at
// least the minimum).
type ProducerOf struct {
	Producer string
	JobKeys  []string // the answer's jobs whose latest run it sent, in the order asked
	Last     time.Time
	P95      time.Duration
	Limit    time.Duration
	Quiet    bool
	Now      time.Time
}

// JobMessage is the sentence people read about an expected job's status (the coverage item's message).
func (s *Source) JobMessage(st trust.JobStatus) string { return s.sig.JobMessage(st) }

// ProducersOf returns the producers of the jobs (one read: each job's latest run by first event time and its
// events' principals) with their health now. Jobs without a run with events have no producer. It names
// producers: the caller decides whom it may show them to.
func (s *Source) ProducersOf(ctx context.Context, jobKeys []string) ([]ProducerOf, error) {
	if len(jobKeys) == 0 {
		return nil, nil
	}
	rows, err := s.r.JobProducers(ctx, jobKeys)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	health, err := s.producerHealth(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
	}
	by := map[string]*ProducerOf{}
	var order []string
	now := s.clock().UTC()
	for _, k := range jobKeys {
		for _, jp := range rows[k] {
			p := jp.Producer
			po, ok := by[p]
			if !ok {
				h, known := health.by[p]
				if !known {
					continue // no event in the lookback: not a producer the quiet rule measures
				}
				h.Now = now
				po = &h
				by[p] = po
				order = append(order, p)
			}
			// an event newer than the snapshot (it may be a minute old) counts: a producer that just reported
			// is not quiet
			if last := fromMs(jp.Last); last.After(po.Last) {
				po.Last = last
			}
			po.Quiet = po.Now.Sub(po.Last) > po.Limit
			if !slices.Contains(po.JobKeys, k) {
				po.JobKeys = append(po.JobKeys, k)
			}
		}
	}
	slices.Sort(order)
	out := make([]ProducerOf, len(order))
	for i, p := range order {
		out[i] = *by[p]
	}
	return out, nil
}

// healthSnapshot is every producer's health at one instant.
type healthSnapshot struct {
	at time.Time
	by map[string]ProducerOf
}

// healthCache keeps the last snapshot and refreshes it at most once at a time.
type healthCache struct {
	mu         sync.Mutex
	snap       *healthSnapshot
	refreshing bool
}

// producerHealth returns the snapshot, reading it when there is none and refreshing it in the background when
// it is older than ProducerHealthTTL.
func (s *Source) producerHealth(ctx context.Context) (*healthSnapshot, error) {
	c := &s.health
	c.mu.Lock()
	snap := c.snap
	stale := snap != nil && s.clock().Sub(snap.at) > ProducerHealthTTL && !c.refreshing
	if stale {
		c.refreshing = true
	}
	c.mu.Unlock()
	if snap == nil {
		fresh, err := s.readHealth(ctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.snap = fresh
		c.mu.Unlock()
		return fresh, nil
	}
	if stale {
		go s.refreshHealth()
	}
	return snap, nil
}

func (s *Source) refreshHealth() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fresh, err := s.readHealth(ctx)
	c := &s.health
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshing = false
	if err == nil {
		c.snap = fresh
	}
}

// readHealth applies the quiet rule to every producer with events in the lookback.
func (s *Source) readHealth(ctx context.Context) (*healthSnapshot, error) {
	now := s.clock().UTC()
	from := now.Add(-s.sig.Config().QuietLookback)
	act, err := s.r.Activity(ctx, "", ms(from))
	if err != nil {
		return nil, err
	}
	snap := &healthSnapshot{at: now, by: map[string]ProducerOf{}}
	for _, a := range act {
		var recent []int64
		for _, m := range a.Minutes {
			if m >= ms(from)/60000 {
				recent = append(recent, m)
			}
		}
		if len(recent) == 0 {
			continue
		}
		p95 := rules.P95Gap(recent)
		limit := s.sig.QuietLimit(a.Producer, p95)
		last := fromMs(a.Last)
		snap.by[a.Producer] = ProducerOf{Producer: a.Producer, Last: last, P95: p95, Limit: limit,
			Quiet: now.Sub(last) > limit}
	}
	return snap, nil
}

// JobProducer is a producer principal of a job's latest run and the latest of its events there (epoch ms).
type JobProducer struct {
	Producer string
	Last     int64
}

func ms(t time.Time) int64 { return t.UTC().UnixMilli() }

func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
