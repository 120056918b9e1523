package gateway

import (
	"context"
	"errors"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// ErrUnavailable is Submit's error when Kafka did not make the events durable (nothing was accepted).
var ErrUnavailable = errors.New("events could not be made durable; nothing was accepted; retry later")

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
