package project

import (
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// RecentEventsMaxBytes bounds the resident bytes of the committed events the projector keeps in memory, in their
// canonical form (rec.size: the rec and the event bytes its strings share), so a run's next event need not read
// back and decode the payloads of the run's earlier events from Neo4j. A run's events usually arrive within
// seconds of each other. 256 MiB holds ~34,000 events of the design-size mix (~7.8 KB each as kept, from events
// of ~3.65 KB): the last ~35 s at 1,000 events/s, ~2 min at 300/s. It was 60,000 events (~0.47 GB, most of a warm
// projector's live heap); bounding bytes instead of events keeps large events from multiplying it
// (docs/adr/0046-memory-bounds-by-bytes.md; --consumer-recent-events-mib). The set of a run's events is always
// read from Neo4j (another instance may have applied some); only payloads are reused.
const RecentEventsMaxBytes int64 = 256 << 20

// recentEvents is a FIFO of committed events, by run key, bounded by their resident bytes. Recs in it are never
// mutated after their commit. Each is remembered with the token of the transaction that stored its payload (the
// Event's ptag), and is used only while the Event still carries that tag, so a payload written by anyone else
// (another instance, a rebuilt database) is always read from Neo4j.
type recentEvents struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	byRun    map[string]map[string]taggedRec // run key -> event key -> rec
	order    []recentKey                     // insertion order, for eviction
	head     int
	n        int
	// requests and hits count runs asked for and runs with a remembered event (metrics).
	requests, hits prometheus.Counter
	entries, sized prometheus.GaugeFunc
}

type recentKey struct {
	run, id string
	size    int64
}

type taggedRec struct {
	r   *rec
	tag string
}

func newRecentEvents(maxBytes int64) *recentEvents {
	c := &recentEvents{maxBytes: maxBytes, byRun: map[string]map[string]taggedRec{},
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_recent_events_requests_total",
			Help: "Runs whose earlier events a transaction looked up in the recent-events cache."}),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_recent_events_hits_total",
			Help: "Runs of those with at least one event remembered in memory (the others read every payload from Neo4j)."}),
	}
	c.entries = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_recent_events_entries",
		Help: "Committed events the projector remembers in memory."}, func() float64 { n, _ := c.held(); return float64(n) })
	c.sized = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_recent_events_bytes",
		Help: "Estimated resident bytes of the committed events the projector remembers (bounded by --consumer-recent-events-mib)."},
		func() float64 { _, b := c.held(); return float64(b) })
	return c
}

func (c *recentEvents) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.requests, c.hits, c.entries, c.sized}
}

// held is how many events the cache holds and their estimated bytes.
func (c *recentEvents) held() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.bytes
}

// setMaxBytes changes the bound; the next add evicts down to it.
func (c *recentEvents) setMaxBytes(maxBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxBytes = maxBytes
}

// add remembers committed recs that belong to a run, stored by the transaction with the given token, then
// forgets the oldest ones beyond the bound.
func (c *recentEvents) add(recs []*rec, tag string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxBytes <= 0 {
		return
	}
	for _, r := range recs {
		run := r.runKey()
		if run == "" {
			continue
		}
		m := c.byRun[run]
		if m == nil {
			m = map[string]taggedRec{}
			c.byRun[run] = m
		}
		if _, ok := m[r.key()]; ok {
			continue
		}
		m[r.key()] = taggedRec{r, tag}
		size := r.size()
		c.order = append(c.order, recentKey{run, r.key(), size})
		c.n++
		c.bytes += size
	}
	for c.bytes > c.maxBytes && c.n > 0 {
		k := c.order[c.head]
		c.order[c.head] = recentKey{}
		c.head++
		c.n--
		c.bytes -= k.size
		if m := c.byRun[k.run]; m != nil {
			delete(m, k.id)
			if len(m) == 0 {
				delete(c.byRun, k.run)
			}
		}
	}
	if c.head > c.n { // compact the queue's consumed prefix (amortised: at least as many added since)
		c.order = append([]recentKey(nil), c.order[c.head:]...)
		c.head = 0
	}
}

// known returns the remembered events of the runs, by event id.
func (c *recentEvents) known(runs []string) map[string]taggedRec {
	out := map[string]taggedRec{}
	if c == nil {
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	hits := 0
	for _, run := range runs {
		if m := c.byRun[run]; len(m) > 0 {
			hits++
			maps.Copy(out, m)
		}
	}
	c.requests.Add(float64(len(runs)))
	c.hits.Add(float64(hits))
	return out
}
