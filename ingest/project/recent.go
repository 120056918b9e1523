package project

import "maps"

import "sync"

// RecentEventsMax bounds how many committed events the projector keeps in memory, in their canonical form, so a
// run's next event need not read back and decode the payloads of the run's earlier events from Neo4j. A run's
// events usually arrive within seconds of each other; at 1,000 events/s this covers the last minute. The set of a
// run's events is always read from Neo4j (another instance may have applied some); only payloads are reused.
const RecentEventsMax = 60_000

// recentEvents is a FIFO of committed events, by run key. Recs in it are never mutated after their commit. Each is
// remembered with the token of the transaction that stored its payload (the Event's ptag), and is used only while
// the Event still carries that tag, so a payload written by anyone else (another instance, a rebuilt database) is
// always read from Neo4j.
type recentEvents struct {
	mu    sync.Mutex
	max   int
	byRun map[string]map[string]taggedRec // run key -> event key -> rec
	order []recentKey                     // insertion order, for eviction
	head  int
	n     int
}

type recentKey struct{ run, id string }

type taggedRec struct {
	r   *rec
	tag string
}

func newRecentEvents(max int) *recentEvents {
	return &recentEvents{max: max, byRun: map[string]map[string]taggedRec{}}
}

// add remembers committed recs that belong to a run, stored by the transaction with the given token.
func (c *recentEvents) add(recs []*rec, tag string) {
	if c == nil || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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
		c.order = append(c.order, recentKey{run, r.key()})
		c.n++
	}
	for c.n > c.max {
		k := c.order[c.head]
		c.order[c.head] = recentKey{}
		c.head++
		c.n--
		if m := c.byRun[k.run]; m != nil {
			delete(m, k.id)
			if len(m) == 0 {
				delete(c.byRun, k.run)
			}
		}
	}
	if c.head > c.max { // compact the queue's consumed prefix
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
	for _, run := range runs {
		maps.Copy(out, c.byRun[run])
	}
	return out
}
