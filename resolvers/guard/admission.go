package guard

import (
	"context"
	"time"
)

// admission bounds the GraphQL requests the whole process runs at once, whoever sends them: the per-principal gate
// keeps one principal from occupying the server, this keeps many principals within their own limits from
// together queueing more work than the server (and its Neo4j pool) can finish. A request waits at most the queue
// wait for a slot and is then refused with 503 and Retry-After, before anything of it is read: under overload the
// answer is an early, cheap refusal the client can act on, not a request that times out after holding a
// goroutine, a body and a Bolt connection (issue 22, "Overload").
type admission struct {
	slots chan struct{}
	wait  time.Duration
	inUse func(delta float64) // the in-flight gauge
}

func newAdmission(max int, wait time.Duration, inUse func(float64)) *admission {
	return &admission{slots: make(chan struct{}, max), wait: wait, inUse: inUse}
}

// enter takes a slot, waiting at most the queue wait (or until ctx ends); ok is false when none came free.
func (a *admission) enter(ctx context.Context) (release func(), ok bool) {
	select {
	case a.slots <- struct{}{}:
	default:
		if a.wait <= 0 {
			return nil, false
		}
		t := time.NewTimer(a.wait)
		defer t.Stop()
		select {
		case a.slots <- struct{}{}:
		case <-t.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
	a.inUse(1)
	return func() {
		<-a.slots
		a.inUse(-1)
	}, true
}
