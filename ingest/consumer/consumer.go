package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/ingest/project"
)

// Projector applies decoded events to the graph (project.Projector).
type Projector interface {
	Apply(ctx context.Context, batch []project.Envelope) (project.Result, error)
}

// Archiver keeps every accepted event (archive.Dir).
type Archiver interface {
	Append(ctx context.Context, recs []archive.Record) error
}

// Decoder validates and decodes one event (decode.Decoder).
type Decoder interface {
	Decode(raw []byte) (olevent.Event, error)
	// DecodeValidated decodes an event the gateway validated before producing it.
	DecodeValidated(raw []byte) (olevent.Event, error)
}

// Sender produces quarantine records (kafkaio.Producer).
type Sender interface {
	Send(ctx context.Context, msgs []kafkaio.Message) error
}

// QuarantineStore records quarantined events so their status can be asked for (graph.Store).
type QuarantineStore interface {
	RecordQuarantined(ctx context.Context, recs []graph.QuarantinedRow) error
}

// HealthChecker says whether the graph database answers; used to tell an outage from a poison message.
type HealthChecker interface {
	Ping(ctx context.Context) error
}

// EpochBumper invalidates every cache entry when a generation bump could not reach Redis.
type EpochBumper interface {
	BumpEpoch(ctx context.Context) error
}

// Guard checks a producer's produce grants for an event (producecheck.Guard).
type Guard interface {
	Check(ctx context.Context, p authz.Principal, ev *olevent.Event) (ownership.Set, *producecheck.Denial)
}

// Deps are the consumer's collaborators.
type Deps struct {
	Projector  Projector
	Archive    Archiver
	Decoder    Decoder
	Quarantine Sender
	QStore     QuarantineStore
	Health     HealthChecker
	Epoch      EpochBumper // may be nil when the cache is off
	Guard      Guard       // checks events arriving straight on external topics against the topic's principal
	Log        *slog.Logger
	Metrics    *Metrics
	Now        func() time.Time
	// AfterProject, when set, runs after a batch is committed in Neo4j and before its offsets are marked.
	// Crash tests use it to SIGKILL the process at exactly that point.
	AfterProject func()
	// BeforeProject, when set, runs after a batch is archived and before it is projected (crash tests).
	BeforeProject func()
}

// Consumer runs one consumer-group member.
type Consumer struct {
	cfg  Config
	kc   kafkaio.Config
	deps Deps
	h    *handler
}

// New builds a consumer.
func New(cfg Config, kc kafkaio.Config, d Deps) *Consumer {
	h := &handler{cfg: cfg, kc: kc, d: d}
	h.combine = newCombiner(cfg.Parallel, cfg.txMaxEvents(), cfg.fairSlice(), d.Now, h.projection())
	h.combine.maxTime = cfg.txMaxTime()
	return &Consumer{cfg: cfg, kc: kc, deps: d, h: h}
}

// Run consumes until ctx is cancelled. On cancellation the current batch finishes (or is abandoned before its
// offsets are marked), offsets are committed, and the group is left cleanly.
func (c *Consumer) Run(ctx context.Context) error {
	sc := c.kc.NewSaramaConfig()
	sc.Consumer.Offsets.Initial = sarama.OffsetOldest
	sc.Consumer.Offsets.AutoCommit.Enable = false
	sc.Consumer.Return.Errors = true
	sc.Consumer.Group.Session.Timeout = c.kc.SessionTimeout
	sc.Consumer.Group.Heartbeat.Interval = c.kc.SessionTimeout / 5
	sc.Consumer.Group.Rebalance.Timeout = c.kc.RebalanceTimeout
	sc.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategySticky()}
	sc.Consumer.Fetch.Default = 4 << 20
	sc.Consumer.Fetch.Min, sc.Consumer.MaxWaitTime = c.cfg.fetch()
	sc.ChannelBufferSize = c.cfg.BatchSize
	group, err := sarama.NewConsumerGroup(c.kc.Brokers, c.kc.ConsumerGroup, sc)
	if err != nil {
		return fmt.Errorf("consumer group %s: %w", c.kc.ConsumerGroup, err)
	}
	defer func() {
		if err := group.Close(); err != nil {
			c.deps.Log.Warn("consumer group close", "err", err)
		}
	}()
	go func() {
		for err := range group.Errors() {
			c.deps.Log.Warn("consumer group error", "err", err)
		}
	}()
	go c.h.keepEpoch(ctx)
	topics := append(c.kc.SourceTopics(), c.kc.QuarantineTopic)
	for ctx.Err() == nil {
		if err := group.Consume(ctx, topics, c.h); err != nil {
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return nil
			}
			c.deps.Log.Warn("consume session ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}
