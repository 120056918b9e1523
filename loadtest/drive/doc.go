// Package drive runs the load: the ingest driver sends generated events to the gateway open-loop at a target
// rate or closed-loop as fast as it is answered, and measures accepted events/s, projected events/s and the
// send-to-visible latency (HTTP send until the Event node with that eventId exists in Neo4j); the query driver
// sends a configurable mix of `lineage` GraphQL queries and measures latency percentiles, throughput,
// truncation and, when the service exports them, the cache hit ratio.
//
// Open-loop latencies are measured from the intended send time, so a slow server cannot hide queueing
// (no coordinated omission). All randomness is seeded; the clock is injected.
package drive

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Percentiles summarises a latency sample in milliseconds.
type Percentiles struct {
	Count int     `json:"count"`
	Mean  float64 `json:"meanMs"`
	P50   float64 `json:"p50Ms"`
	P95   float64 `json:"p95Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
}

// Summarise computes percentiles (nearest rank) of a sample.
func Summarise(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := append([]time.Duration(nil), d...)
	slices.Sort(s)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return ms(s[max(0, min(i, len(s)-1))])
	}
	return Percentiles{Count: len(s), Mean: ms(sum / time.Duration(len(s))), P50: rank(0.50), P95: rank(0.95),
		P99: rank(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Second is one second of a run's timeline.
type Second struct {
	T         int   `json:"t"` // seconds since the start
	Sent      int   `json:"sent"`
	Accepted  int   `json:"accepted"`
	Rejected  int   `json:"rejected"`
	Projected int   `json:"projected"`
	Completed int   `json:"completed"` // queries answered
	Errors    int   `json:"errors"`
	Lag       int64 `json:"lag"` // consumer lag sampled in this second, -1 when not sampled
}

// timeline accumulates per-second counters; safe for concurrent use.
type timeline struct {
	mu    sync.Mutex
	start time.Time
	secs  []Second
}

func newTimeline(start time.Time) *timeline { return &timeline{start: start} }

func (t *timeline) at(now time.Time, f func(*Second)) {
	i := max(0, int(now.Sub(t.start)/time.Second))
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.secs) <= i {
		t.secs = append(t.secs, Second{T: len(t.secs), Lag: -1})
	}
	f(&t.secs[i])
}

func (t *timeline) snapshot() []Second {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Second(nil), t.secs...)
}
