package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// ErrUnavailable is Submit's error when Kafka did not make the events durable (nothing was accepted).
var ErrUnavailable = errors.New("events could not be made durable; nothing was accepted; retry later")

// ErrFenced is Submit's error when the submission's Fence refused it: nothing was produced, not even quarantine
// copies (ADR 0087).
var ErrFenced = errors.New("the submission's fence refused it; nothing was produced")

// Fence is what a submission must still pass right before its messages are produced: the scheduled catalog
// sync's lease, held by this process with this token (ADR 0087). An error refuses the whole submission.
type Fence interface {
	Check(ctx context.Context) error
}

// Submission is what Submit did with a set of events built inside the server (declared lineage): the per-event
// results, and whether the events were accepted (all of them) or none (a refusal of any one refuses them all).
type Submission struct {
	Accepted bool
	Results  []Result
}

// Submit takes events built inside the server for the principal in ctx through exactly the per-event path of
// POST /api/v1/lineage/batch: decode and validate, the produce check (and the owned set the projector gets), the
// event id and digest, the id-conflict check, the Kafka message with the same headers. It is all or nothing:
// when any event is refused, only the refused events' quarantine copies are sent (as the batch endpoint sends
// them) and no event is accepted. Rate limit and batch length are the caller's (it bounds its own input); the
// events are counted in the gateway's metrics like any other.
func (g *Gateway) Submit(ctx context.Context, events [][]byte) (Submission, error) {
	return g.SubmitWith(ctx, events, g.guard)
}

// SubmitWith is Submit with the write check (which events the principal may write, and the namespaces each
// owns) decided by guard instead of the produce grants: the governance mutations (ADR 0067) write under
// MANAGE_TAGS on one dataset, which their own guard checked, through every other step of the same path.
func (g *Gateway) SubmitWith(ctx context.Context, events [][]byte, guard Guard) (Submission, error) {
	return g.submit(ctx, events, guard, nil)
}

// SubmitFenced is Submit with fence checked after every event is prepared and right before the messages are
// produced: a refusal (ErrFenced, wrapping the fence's error) produces nothing and is counted in
// headwater_gateway_fenced_total. The scheduled catalog sync submits so, with its lease as the fence (ADR 0087).
func (g *Gateway) SubmitFenced(ctx context.Context, events [][]byte, fence Fence) (Submission, error) {
	return g.submit(ctx, events, g.guard, fence)
}

func (g *Gateway) submit(ctx context.Context, events [][]byte, guard Guard, fence Fence) (Submission, error) {
	who := authz.FromContext(ctx)
	req := request{who: who, principal: who.Subject, receivedAt: g.now().UTC(), guard: guard}
	results := make([]Result, len(events))
	var msgs, quarantined []kafkaio.Message
	inBatch := map[string]string{}
	refused := false
	for i, raw := range events {
		res, m := g.prepare(ctx, req, i, raw, inBatch)
		results[i] = res
		if res.Status == "accepted" {
			msgs = append(msgs, m...)
			continue
		}
		refused = true
		quarantined = append(quarantined, m...)
	}
	if refused {
		msgs = quarantined
	}
	if fence != nil {
		if err := fence.Check(ctx); err != nil {
			g.m.fenced.Inc()
			g.log.Warn("submission fenced; nothing produced", "principal", req.principal, "events", len(events), "err", err)
			return Submission{}, fmt.Errorf("%w: %w", ErrFenced, err)
		}
	}
	start := g.now()
	err := g.send.Send(ctx, msgs)
	g.m.produceSeconds.Observe(g.now().Sub(start).Seconds())
	if err != nil {
		g.log.Warn("kafka did not acknowledge", "principal", req.principal, "messages", len(msgs), "err", err)
		g.m.unavailable.Inc()
		return Submission{}, ErrUnavailable
	}
	if refused {
		for i := range results {
			if results[i].Status == "accepted" {
				results[i] = Result{Index: i, Status: "withheld", EventID: results[i].EventID}
			}
		}
		g.count(req.principal, results)
		return Submission{Results: results}, nil
	}
	g.rememberAccepted(req, results)
	g.count(req.principal, results)
	return Submission{Accepted: true, Results: results}, nil
}
