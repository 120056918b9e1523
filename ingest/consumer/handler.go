package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/project"
)

// handler implements sarama.ConsumerGroupHandler: one ConsumeClaim goroutine per assigned partition.
type handler struct {
	cfg        Config
	kc         kafkaio.Config
	d          Deps
	epochDirty atomic.Bool   // a generation bump was missed; the epoch must be bumped when Redis is back
	combine    *combiner     // bounds concurrent projections (Config.Parallel) and merges waiting partitions' batches
	stopDue    func()        // ends the session's due-save timer (startDueSaves) and waits for it
	dueEvery   time.Duration // the due-save timer's period (0: dueSaveEvery; tests shorten it)
}

// DueSaver is implemented by a projector whose fold state has saves that fall due with time
// (project.Projector.SaveDue): the consumer calls it every dueSaveEvery during a session, so an idle projector's
// unsaved state, and a dataset another instance wrote without it, are settled within about a minute
// (docs/adr/0054-refused-saves-refold-the-holders-changes.md).
type DueSaver interface {
	SaveDue(ctx context.Context) error
}

// dueSaveEvery is how often a session asks the projector to save its due fold state: a quarter of
// foldstate.SnapshotEvery, so a state is saved at most ~15 s after it falls due even when no batch arrives. Each
// call is one small write transaction when nothing is due.
const dueSaveEvery = foldstate.SnapshotEvery / 4

var _ sarama.ConsumerGroupHandler = (*handler)(nil)

// FoldState is implemented by a projector that keeps fold state in memory and saves it write-behind
// (project.Projector): each partition is read from its replay point, so what a crash left unsaved is folded
// again, and at the end of a session (rebalance, shutdown) the state is saved and the entries of its partitions
// dropped, since another instance may own them next.
type FoldState interface {
	ReplayPoint(ctx context.Context, topic string, partition int32) (int64, bool, error)
	SaveFoldState(ctx context.Context, parts []string) error
}

// Setup rewinds each claimed partition to the projector's replay point (never forward: sarama ignores that), and
// starts the session's due-save timer.
func (h *handler) Setup(sess sarama.ConsumerGroupSession) error {
	fs, ok := h.d.Projector.(FoldState)
	if !ok {
		return nil
	}
	for topic, parts := range sess.Claims() {
		if h.isQuarantineTopic(topic) {
			continue
		}
		for _, p := range parts {
			off, ok, err := fs.ReplayPoint(sess.Context(), topic, p)
			if err != nil {
				return err
			}
			if ok {
				sess.ResetOffset(topic, p, off, "")
			}
		}
	}
	h.startDueSaves(sess.Context())
	return nil
}

// Cleanup saves the fold state and drops the entries of the session's partitions.
func (h *handler) Cleanup(sess sarama.ConsumerGroupSession) error {
	if h.stopDue != nil {
		h.stopDue()
		h.stopDue = nil
	}
	fs, ok := h.d.Projector.(FoldState)
	if !ok {
		return nil
	}
	var parts []string
	for topic, ps := range sess.Claims() {
		for _, p := range ps {
			parts = append(parts, project.PartitionName(topic, p))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.kc.RebalanceTimeout)
	defer cancel()
	if err := fs.SaveFoldState(ctx, parts); err != nil {
		h.d.Log.Warn("fold state not saved at session end; a restart replays from the last replay points", "err", err)
	}
	return nil
}

// startDueSaves runs the projector's due saves every dueSaveEvery until the session ends (stopDue).
func (h *handler) startDueSaves(ctx context.Context) {
	ds, ok := h.d.Projector.(DueSaver)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := h.dueEvery
		if every <= 0 {
			every = dueSaveEvery
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := ds.SaveDue(ctx); err != nil && ctx.Err() == nil {
					h.d.Log.Warn("due fold state not saved; the next batch or session end saves it", "err", err)
				}
			}
		}
	}()
	h.stopDue = func() { cancel(); <-done }
}

// ConsumeClaim batches the partition's messages (BatchSize, or once its oldest message is BatchWait old,
// whichever first) and processes each batch; offsets are marked and committed only after the batch is in Neo4j
// (or quarantined).
func (h *handler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	ctx := sess.Context()
	batch := make([]*sarama.ConsumerMessage, 0, h.cfg.BatchSize)
	timer := time.NewTimer(h.cfg.BatchWait)
	stopTimer(timer)
	defer timer.Stop()
	flush := func() error {
		stopTimer(timer)
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
			if len(batch) == 0 {
				timer.Reset(h.batchWait(m))
			}
			batch = append(batch, m)
			if len(batch) >= h.cfg.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		case <-timer.C:
			// Take what is already fetched (a backlog's old messages must not flush one by one).
			for drained := false; !drained && len(batch) < h.cfg.BatchSize; {
				select {
				case m, ok := <-claim.Messages():
					if !ok {
						return flush()
					}
					batch = append(batch, m)
				default:
					drained = true
				}
			}
			if err := flush(); err != nil {
				return err
			}
		case <-ctx.Done():
			// Rebalance or shutdown: the unflushed batch is not marked; the next owner re-reads it.
			return nil
		}
	}
}

// batchWait is how long a batch whose first message is m may still wait to fill: BatchWait from the message's
// Kafka timestamp, so a message that arrived while the previous batch was being projected does not wait a whole
// BatchWait more (clamped to [0, BatchWait] against clock skew).
func (h *handler) batchWait(m *sarama.ConsumerMessage) time.Duration {
	if m.Timestamp.IsZero() {
		return h.cfg.BatchWait
	}
	return min(max(h.cfg.BatchWait-h.d.Now().Sub(m.Timestamp), 0), h.cfg.BatchWait)
}

// stopTimer stops t and drains a tick it already delivered.
func stopTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
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
			if h.d.BeforeProject != nil {
				h.d.BeforeProject()
			}
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
