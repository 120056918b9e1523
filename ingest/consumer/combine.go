package consumer

import (
	"context"
	"sync"
)

// combiner is group commit across partitions. Each partition's claim prepares its batch (decode, archive) and
// then queues it; whichever claim gets the projection slot takes every queued batch, up to maxEvents events, and
// projects them as one transaction, then hands each batch's claim the outcome. While one transaction is in Neo4j
// the other partitions' batches gather, so the next transaction carries them all: a hub dataset or a busy job
// that every partition touches is locked, read and rewritten once per transaction instead of once per partition.
// Each claim still marks and commits only its own offsets, after the outcome of the transaction that held its
// batch.
type combiner struct {
	slots     chan struct{}
	maxEvents int
	mu        sync.Mutex
	queue     []*queued
}

type queued struct {
	ctx  context.Context // the claim's session
	p    prepared
	done chan error // buffered: the outcome, sent once
}

func newCombiner(parallel, maxEvents int) *combiner {
	return &combiner{slots: make(chan struct{}, max(parallel, 1)), maxEvents: maxEvents}
}

// run queues p and returns the outcome of the transaction that projected it: its own, when this call got the
// slot, or another claim's that took p along.
func (c *combiner) run(ctx context.Context, p prepared, project func(context.Context, prepared) error) error {
	me := &queued{ctx: ctx, p: p, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, me)
	c.mu.Unlock()
	for {
		select {
		case err := <-me.done:
			return err
		case c.slots <- struct{}{}:
			c.lead(ctx, project)
			<-c.slots
		case <-ctx.Done():
			c.withdraw(me)
			return ctx.Err()
		}
	}
}

// lead takes queued batches (the oldest first, at least one, at most maxEvents events in all), projects them
// together and reports to each.
func (c *combiner) lead(ctx context.Context, project func(context.Context, prepared) error) {
	c.mu.Lock()
	n, events := 0, 0
	for n < len(c.queue) && (n == 0 || events+len(c.queue[n].p.envs) <= c.maxEvents) {
		events += len(c.queue[n].p.envs)
		n++
	}
	taken := append([]*queued(nil), c.queue[:n]...)
	c.queue = c.queue[n:]
	c.mu.Unlock()
	if len(taken) == 0 {
		return
	}
	merged := prepared{}
	for _, q := range taken {
		merged.envs = append(merged.envs, q.p.envs...)
		merged.bad = append(merged.bad, q.p.bad...)
	}
	err := project(ctx, merged)
	if err != nil && ctx.Err() != nil {
		// The leader's session ended mid-transaction: the other claims' batches go back to the head of the queue
		// for another leader (projection is idempotent, so it does not matter whether this one committed).
		var back []*queued
		for _, q := range taken {
			if q.ctx.Err() == nil {
				back = append(back, q)
			} else {
				q.done <- err
			}
		}
		c.mu.Lock()
		c.queue = append(back, c.queue...)
		c.mu.Unlock()
		return
	}
	for _, q := range taken {
		q.done <- err
	}
}

// withdraw removes a batch whose claim stopped waiting (its session ended); a batch already taken is projected
// anyway, and its offsets stay unmarked, so the next owner re-reads it (projection is idempotent).
func (c *combiner) withdraw(me *queued) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, q := range c.queue {
		if q == me {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return
		}
	}
}
