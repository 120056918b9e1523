package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// handler implements sarama.ConsumerGroupHandler: one ConsumeClaim goroutine per assigned partition.
type handler struct {
	cfg        Config
	kc         kafkaio.Config
	d          Deps
	epochDirty atomic.Bool // a generation bump was missed; the epoch must be bumped when Redis is back
	combine    *combiner   // bounds concurrent projections (Config.Parallel) and merges waiting partitions' batches
}

var _ sarama.ConsumerGroupHandler = (*handler)(nil)

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim batches the partition's messages (BatchSize or BatchWait, whichever first) and processes each
// batch; offsets are marked and committed only after the batch is in Neo4j (or quarantined).
func (h *handler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	ctx := sess.Context()
	batch := make([]*sarama.ConsumerMessage, 0, h.cfg.BatchSize)
	timer := time.NewTimer(h.cfg.BatchWait)
	defer timer.Stop()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := h.process(ctx, claim.Topic(), batch); err != nil {
			return err
		}
		for _, m := range batch {
			sess.MarkMessage(m, "")
		}
		sess.Commit()
		h.d.Metrics.lag.WithLabelValues(claim.Topic(), itoa(claim.Partition())).Set(float64(claim.HighWaterMarkOffset() - batch[len(batch)-1].Offset - 1))
		batch = batch[:0]
		return nil
	}
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return flush()
			}
			batch = append(batch, m)
			if len(batch) >= h.cfg.BatchSize {
				if err := flush(); err != nil {
					return err
				}
				resetTimer(timer, h.cfg.BatchWait)
			}
		case <-timer.C:
			if err := flush(); err != nil {
				return err
			}
			timer.Reset(h.cfg.BatchWait)
		case <-ctx.Done():
			// Rebalance or shutdown: the unflushed batch is not marked; the next owner re-reads it.
			return nil
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(d)
}

// errAbandoned means the batch was not finished because the session ended; its offsets stay unmarked.
var errAbandoned = errors.New("batch abandoned at session end")

func (h *handler) process(ctx context.Context, topic string, msgs []*sarama.ConsumerMessage) error {
	start := h.d.Now()
	var err error
	if h.isQuarantineTopic(topic) {
		err = h.recordQuarantined(ctx, msgs)
	} else {
		var p prepared
		if p, err = h.prepareBatch(ctx, msgs); err == nil {
			var poison []kafkaio.Message
			if poison, err = h.combine.run(ctx, p.envs); err == nil {
				err = h.finishBatch(ctx, append(p.bad, poison...))
			}
		}
	}
	if errors.Is(err, errAbandoned) || ctx.Err() != nil {
		return ctx.Err()
	}
	h.d.Metrics.batchSize.Observe(float64(len(msgs)))
	h.d.Metrics.batchSeconds.Observe(h.d.Now().Sub(start).Seconds())
	return err
}
