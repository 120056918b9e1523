package consumer

import (
	"context"
	"sync"
	"time"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/project"
)

// combiner is group commit across partitions, shared fairly between producers. Each partition's claim prepares
// its batch (decode, archive) and queues its events on the lane of their producer principal; whichever claim
// gets a projection slot builds one transaction from the lanes and projects it, then settles each event. While
// one transaction is in Neo4j the other partitions' events gather, so the next transaction carries them all: a
// hub dataset or a busy job that every partition touches is locked, read and rewritten once per transaction
// instead of once per partition. A claim marks and commits its own offsets once every event of its batch is
// projected or quarantined, whichever transactions carried them.
//
// Fairness (issue 13 item 8), while more than one producer is active (queued events in the last activeWindow):
//   - a backlogged producer (one with at least a share queued) gets transactions of its own of one share, about
//     Config.FairSlice of projection time at the measured cost per event, in round-robin with the others;
//   - the light producers' events go together into an express transaction, which may run beside the main one
//     (one more at once), so they wait neither for a backlogged producer's share nor for its backlog. The gateway
//     puts each producer on one partition (kafkaio.ProducerLane), so a backlog does not sit in front of them in
//     Kafka either.
//
// With one producer active nothing changes: one transaction at a time (Config.Parallel), up to maxEvents.
//
// Poison: when a transaction fails while Neo4j is healthy, its events go back to the head of their lanes as
// suspects, in groups no larger than the next of isolationGroups, and a suspect group is projected on its own
// (one producer, nothing else in the transaction). An event is re-run at most len(isolationGroups) times however
// large the batch: a poison event costs O(1) transactions, and only its own producer's events share them after
// the first failure; one that fails alone is quarantined.
type combiner struct {
	slots     chan struct{}
	express   chan struct{} // one more transaction at once, for light producers only, while others are active
	maxEvents int
	// maxTime, when set, also caps a transaction by its expected projection time: maxTime / perEvent events
	// (Config.TxMaxTime; at least minShare).
	maxTime time.Duration
	slice   time.Duration
	now     func() time.Time
	run1    projection

	mu       sync.Mutex
	lanes    map[string]*lane
	ring     []string // principals in round-robin order
	next     int      // ring index the next transaction starts at
	perEvent time.Duration
	changed  chan struct{} // closed and replaced whenever events are requeued or settled
}

// projection is what the combiner needs of the handler.
type projection struct {
	apply   func(context.Context, []project.Envelope) error // one transaction
	healthy func(context.Context) bool                      // Neo4j answers: a failure is the batch's, not an outage
	// contended says a failure came from waiting on other work (graph.IsContention): a single event failing so
	// is retried instead of quarantined. Nil: no failure is contention.
	contended func(error) bool
	poison    func(project.Envelope, error) kafkaio.Message // the quarantine message of an event that fails alone
	done      func([]project.Envelope)                      // after a transaction committed these
	warn      func(msg string, args ...any)
}

// Fairness and isolation constants (see combiner).
const (
	// activeWindow: a producer that queued events this recently counts as active for fair shares.
	activeWindow = 10 * time.Second
	// minShare is the smallest share of a transaction a producer gets while several are active.
	minShare = 10
	// initialPerEvent is the cost per event assumed until a transaction has been measured.
	initialPerEvent = 2 * time.Millisecond
)

// isolationGroups are the suspect group sizes after successive failures: a failed transaction's events are
// re-run in groups of 64, a failed group of 64 in groups of 8, a failed group of 8 one by one.
var isolationGroups = []int{64, 8, 1}

// queued is one claim's batch while its events are in the lanes or in flight.
type queued struct {
	ctx     context.Context // the claim's session
	pending int             // events not yet projected or quarantined
	poison  []kafkaio.Message
	dropped bool       // the claim stopped waiting: its events are not projected further
	done    chan error // buffered: the outcome, sent once
}

// item is one event waiting in its producer's lane.
type item struct {
	env   project.Envelope
	batch *queued
	group int // 0: not suspect; otherwise the largest suspect group it may be projected in
}

// lane is one producer principal's queue.
type lane struct {
	items    []*item
	lastSeen time.Time
	inflight int // events of this lane in transactions now
}

func newCombiner(parallel, maxEvents int, slice time.Duration, now func() time.Time, p projection) *combiner {
	return &combiner{slots: make(chan struct{}, max(parallel, 1)), express: make(chan struct{}, 1), maxEvents: maxEvents, slice: slice, now: now,
		run1: p, lanes: map[string]*lane{}, perEvent: initialPerEvent, changed: make(chan struct{})}
}

// run queues the envelopes and returns once each is projected (or, poison, quarantined), with the quarantine
// messages of the poison ones. Meanwhile, whenever a projection slot is free, this claim leads transactions for
// every claim's events.
func (c *combiner) run(ctx context.Context, envs []project.Envelope) ([]kafkaio.Message, error) {
	if len(envs) == 0 {
		return nil, nil
	}
	me := &queued{ctx: ctx, pending: len(envs), done: make(chan error, 1)}
	c.enqueue(me, envs)
	for {
		if ctx.Err() != nil {
			c.withdraw(me)
			return nil, ctx.Err()
		}
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		led := true
		select {
		case err := <-me.done:
			return me.poison, err
		case c.slots <- struct{}{}: // the main slot first whenever it is free
			led = c.lead(ctx, false)
			c.release(c.slots, led)
		default:
			select {
			case err := <-me.done:
				return me.poison, err
			case c.slots <- struct{}{}:
				led = c.lead(ctx, false)
				c.release(c.slots, led)
			case c.express <- struct{}{}:
				led = c.lead(ctx, true)
				c.release(c.express, led)
			case <-ctx.Done():
			}
		}
		if !led {
			// Nothing to take (the rest is in flight, or only the express slot was free): wait for a change.
			// Every outcome and every freed slot comes with a change, so nothing is missed.
			select {
			case err := <-me.done:
				return me.poison, err
			case <-changed:
			case <-ctx.Done():
			}
		}
	}
}

// release frees a slot; after a transaction it wakes the claims waiting for one (after finding nothing to
// take nothing changed, and waking them would only spin).
func (c *combiner) release(slot chan struct{}, led bool) {
	<-slot
	if led {
		c.mu.Lock()
		c.signal()
		c.mu.Unlock()
	}
}

func (c *combiner) enqueue(b *queued, envs []project.Envelope) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range envs {
		l := c.lane(e.Principal)
		l.items = append(l.items, &item{env: e, batch: b})
		l.lastSeen = now
	}
	c.signal()
}

// lane returns the principal's lane, creating it (c.mu held).
func (c *combiner) lane(principal string) *lane {
	l, ok := c.lanes[principal]
	if !ok {
		l = &lane{}
		c.lanes[principal] = l
		c.ring = append(c.ring, principal)
	}
	return l
}

// lead builds one transaction (with the express slot: light producers' events only), projects it and settles
// its events. It reports whether there was anything to project.
func (c *combiner) lead(ctx context.Context, express bool) bool {
	var tx []*item
	suspect := false
	if express {
		tx = c.takeLight()
	} else {
		tx, suspect = c.take()
	}
	if len(tx) == 0 {
		return false
	}
	defer c.landed(tx)
	envs := make([]project.Envelope, len(tx))
	for i, it := range tx {
		envs[i] = it.env
	}
	for {
		start := c.now()
		err := c.run1.apply(ctx, envs)
		switch {
		case err == nil:
			c.settle(tx, !suspect && !express, c.now().Sub(start))
			c.run1.done(envs)
			return true
		case ctx.Err() != nil:
			// The leader's session ended mid-transaction: the events go back for another leader (projection is
			// idempotent, so it does not matter whether this one committed).
			c.requeue(tx, func(it *item) int { return it.group })
			return true
		case c.run1.healthy(ctx) && (len(tx) > 1 || !c.contention(err)):
			c.isolate(tx, err)
			return true
		}
		// Neo4j is down, or one event's transaction waited too long on other work (a lock held past the
		// transaction timeout): that says nothing about the event, so it is retried, never quarantined.
		c.run1.warn("graph unavailable or contended; retrying transaction", "events", len(envs), "err", err)
		select {
		case <-ctx.Done():
			c.requeue(tx, func(it *item) int { return it.group })
			return true
		case <-time.After(retryBackoff):
		}
	}
}

// contention is projection.contended, false when it is not set.
func (c *combiner) contention(err error) bool {
	return c.run1.contended != nil && c.run1.contended(err)
}

// take builds the next transaction (c.mu held inside), visiting the lanes round-robin from c.next: the first
// lane with events decides. A suspect group at its head runs alone; so does one share of a backlogged producer
// (one with at least a share queued while others are active); otherwise the transaction merges the queued
// events of every lane that is not backlogged, up to maxEvents. So a light producer waits at most for one
// backlogged producer's share before its own small transaction.
func (c *combiner) take() (tx []*item, suspect bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		for _, it := range tx {
			c.lanes[it.env.Principal].inflight++
		}
	}()
	c.forget()
	share, limit := c.share(), c.limit()
	first := -1
	for k := range len(c.ring) {
		i := (c.next + k) % len(c.ring)
		l := c.lanes[c.ring[i]]
		if len(l.items) == 0 {
			continue
		}
		if head := l.items[0]; head.group > 0 {
			if len(tx) > 0 {
				continue // a suspect group runs alone, on its own turn
			}
			n := 1
			for n < len(l.items) && n < head.group && l.items[n].group == head.group && n < share {
				n++
			}
			tx = append(tx, l.items[:n]...)
			l.items = l.items[n:]
			c.next = (i + 1) % len(c.ring)
			return tx, true
		}
		n := 0
		for n < len(l.items) && l.items[n].group == 0 && n < share && len(tx)+n < limit {
			n++
		}
		if heavy := n == share && share < limit; heavy && len(tx) > 0 {
			continue // a backlogged producer's share runs alone, on its own turn
		} else if heavy {
			tx = append(tx, l.items[:n]...)
			l.items = l.items[n:]
			c.next = (i + 1) % len(c.ring)
			return tx, false
		}
		tx = append(tx, l.items[:n]...)
		l.items = l.items[n:]
		if first < 0 {
			first = i
		}
		if len(tx) >= limit {
			break
		}
	}
	if first >= 0 {
		c.next = (first + 1) % len(c.ring)
	}
	return tx, false
}

// takeLight builds an express transaction while several producers are active (c.mu held inside): the queued
// events of every lane that is not backlogged, has no suspect at its head and nothing in flight. A light
// producer's events then do not wait for a backlogged producer's share to commit.
func (c *combiner) takeLight() []*item {
	c.mu.Lock()
	defer c.mu.Unlock()
	share, limit := c.share(), c.limit()
	if share >= limit {
		return nil // one active producer: the express slot would only run it twice at once
	}
	var tx []*item
	for _, p := range c.ring {
		l := c.lanes[p]
		if len(l.items) == 0 || l.inflight > 0 || len(l.items) >= share || l.items[0].group > 0 || len(tx)+len(l.items) > limit {
			continue
		}
		tx = append(tx, l.items...)
		l.inflight += len(l.items)
		l.items = nil
	}
	return tx
}

// landed counts a transaction's events out of flight, whatever became of them.
func (c *combiner) landed(tx []*item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range tx {
		if l, ok := c.lanes[it.env.Principal]; ok && l.inflight > 0 {
			l.inflight--
		}
	}
	c.signal()
}

// share is the most events one producer may put in a transaction (c.mu held): everything when it is the only
// active producer, else about one slice of projection time, at least minShare.
func (c *combiner) share() int {
	active, now := 0, c.now()
	for _, l := range c.lanes {
		if len(l.items) > 0 || now.Sub(l.lastSeen) < activeWindow {
			active++
		}
	}
	if active <= 1 {
		return c.limit()
	}
	return min(c.limit(), max(minShare, int(c.slice/max(c.perEvent, time.Microsecond))))
}

// limit is the most events in one transaction (c.mu held): maxEvents, and with maxTime set at most maxTime of
// projection at the measured cost per event (at least minShare).
func (c *combiner) limit() int {
	if c.maxTime <= 0 {
		return c.maxEvents
	}
	return min(c.maxEvents, max(minShare, int(c.maxTime/max(c.perEvent, time.Microsecond))))
}

// forget drops idle lanes of producers not seen for activeWindow, so the ring stays as long as the set of
// active producers (c.mu held).
func (c *combiner) forget() {
	now := c.now()
	keep := c.ring[:0]
	for i, p := range c.ring {
		if l := c.lanes[p]; len(l.items) == 0 && l.inflight == 0 && now.Sub(l.lastSeen) >= activeWindow {
			delete(c.lanes, p)
			if i < c.next {
				c.next--
			}
			continue
		}
		keep = append(keep, p)
	}
	c.ring = keep
	if c.next >= len(c.ring) || c.next < 0 {
		c.next = 0
	}
}

// settle counts a committed transaction's events done and, for a main transaction (measure), updates the cost
// per event the shares are sized by.
func (c *combiner) settle(tx []*item, measure bool, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if measure && len(tx) >= minShare {
		per := took / time.Duration(len(tx))
		c.perEvent = (c.perEvent*3 + per) / 4
	}
	for _, it := range tx {
		c.finish(it.batch)
	}
	c.signal()
}

// finish counts one event of b done and reports b's outcome after its last (c.mu held).
func (c *combiner) finish(b *queued) {
	b.pending--
	if b.pending == 0 {
		b.done <- nil
	}
}

// isolate handles a transaction that failed while Neo4j is healthy: an event that failed alone is quarantined,
// the others go back as suspects in groups of the next smaller size.
func (c *combiner) isolate(tx []*item, cause error) {
	if len(tx) == 1 {
		it := tx[0]
		msg := c.run1.poison(it.env, cause)
		c.mu.Lock()
		if !it.batch.dropped {
			it.batch.poison = append(it.batch.poison, msg)
			c.finish(it.batch)
		}
		c.signal()
		c.mu.Unlock()
		return
	}
	group := 1
	for _, g := range isolationGroups {
		if g < len(tx) {
			group = g
			break
		}
	}
	c.run1.warn("transaction failed; isolating its events", "events", len(tx), "group", group, "err", cause)
	c.requeue(tx, func(*item) int { return group })
}

// requeue puts items back at the head of their lanes, in order, with the suspect group size given by group;
// items of batches whose claim stopped waiting are dropped.
func (c *combiner) requeue(tx []*item, group func(*item) int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	back := map[string][]*item{}
	var order []string
	for _, it := range tx {
		if it.batch.dropped || it.batch.ctx.Err() != nil {
			continue
		}
		it.group = group(it)
		p := it.env.Principal
		if _, ok := back[p]; !ok {
			order = append(order, p)
		}
		back[p] = append(back[p], it)
	}
	for _, p := range order {
		l := c.lane(p)
		l.items = append(back[p], l.items...)
	}
	c.signal()
}

// withdraw removes a batch whose claim stopped waiting (its session ended); its events in flight are projected
// anyway, and its offsets stay unmarked, so the next owner re-reads it (projection is idempotent).
func (c *combiner) withdraw(b *queued) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b.dropped = true
	for _, l := range c.lanes {
		keep := l.items[:0]
		for _, it := range l.items {
			if it.batch != b {
				keep = append(keep, it)
			}
		}
		l.items = keep
	}
}

// signal wakes claims waiting for events to lead (c.mu held).
func (c *combiner) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}
