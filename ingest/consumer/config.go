// Package consumer is the projector's Kafka side (`headwater ingest`, or in-process in `serve`): a sarama consumer
// group over the raw-event topics that batches messages per partition, validates them again (producers may write
// to Kafka directly), archives them, projects them into Neo4j, and commits offsets only after Neo4j has committed.
// Poison messages go to the quarantine topic and the partition moves on. The quarantine topic is consumed too, so
// a producer can ask what became of a rejected event.
package consumer

import (
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/ingest/project"
)

// Defaults for batching and fetching (docs/adr/0038-latency-settings-and-the-warm-world-procedure.md). Below
// saturation an event waits for its batch, then for the transaction in flight, then for its own: the batch wait
// is the part a setting removes outright, so it is short; a backlog still fills batches to BatchSize at once.
const (
	DefaultBatchSize = 2000
	DefaultBatchWait = 50 * time.Millisecond
	DefaultFairSlice = 500 * time.Millisecond
	// DefaultTxMaxEvents caps the events of one group-commit transaction (the batch size, as before: today's
	// projection rewrites each touched dataset's state and job checkpoint once per transaction, so smaller
	// transactions cost more CPU and log per event; measured in docs/bench/2026-12-01-cost).
	DefaultTxMaxEvents = 2000
	// DefaultTxMaxTime caps one transaction by its expected projection time (events × the measured cost per
	// event), a third of the 30 s Neo4j transaction timeout (--neo4j-query-timeout), so a starved projector's
	// transactions shrink before they time out. The review's ~150 ms waits for a write-only projection (R1-R3).
	DefaultTxMaxTime = 10 * time.Second
	// DefaultFetchMinBytes and DefaultFetchMaxWait: the broker answers a fetch once it has this many bytes for the
	// partitions asked, or after the wait, instead of once per trickle of messages (sarama's default is 1 byte).
	DefaultFetchMinBytes = 64 << 10
	DefaultFetchMaxWait  = 50 * time.Millisecond
	retryBackoff         = 2 * time.Second // when Neo4j is unreachable, wait before retrying the same batch
	epochRetry           = time.Second     // how often a missed cache-epoch bump is retried
)

// Config is the consumer configuration.
type Config struct {
	BatchSize int           `help:"Most messages projected in one Neo4j batch." default:"2000" env:"HEADWATER_CONSUMER_BATCH_SIZE" yaml:"batchSize"`
	BatchWait time.Duration `help:"Longest a message waits, from its Kafka timestamp, for its batch to fill." default:"50ms" env:"HEADWATER_CONSUMER_BATCH_WAIT" yaml:"batchWait"`
	// TxMaxEvents and TxMaxTime cap one group-commit transaction, whichever is reached first; TxMaxTime is
	// turned into events by the measured projection cost per event (at least 10 events).
	TxMaxEvents int           `help:"Most events in one projection transaction." default:"2000" env:"HEADWATER_CONSUMER_TX_MAX_EVENTS" yaml:"txMaxEvents"`
	TxMaxTime   time.Duration `help:"Longest expected projection time of one transaction (events x measured cost per event)." default:"10s" env:"HEADWATER_CONSUMER_TX_MAX_TIME" yaml:"txMaxTime"`
	// FetchMinBytes and FetchMaxWait are the Kafka fetch request's minimum bytes and longest broker wait.
	FetchMinBytes int32         `help:"Bytes the broker gathers before answering a fetch (or FetchMaxWait passes)." default:"65536" env:"HEADWATER_CONSUMER_FETCH_MIN_BYTES" yaml:"fetchMinBytes"`
	FetchMaxWait  time.Duration `help:"Longest the broker holds a fetch waiting for FetchMinBytes." default:"50ms" env:"HEADWATER_CONSUMER_FETCH_MAX_WAIT" yaml:"fetchMaxWait"`
	// Parallel is how many group-commit transactions this process runs at once. A second one overlaps the first's
	// Go work and commit, but the two take turns on the hub datasets, new dataset names and hot unresolved
	// identities both touch (locks held until commit). Measured on the design-size graph (docs/bench/2026-11-30-b):
	// on a fresh world at 600 events/s two at once lowered the standing lag (15,000 -> 12,000) and the
	// send-to-visible P99 (31.5 -> 26 s); on a warm world at 500 events/s they projected no more and the P99 rose
	// (17 -> 23 s) while each waited on the other's locks. One is the default. Before group commit, six at once
	// hit the 30 s transaction timeout. While several producers are active, one more (express) transaction may
	// run beside these, carrying only light producers' events (combine.go).
	Parallel int `help:"Batches projected at once by this process (the rest wait their turn)." default:"1" env:"HEADWATER_CONSUMER_PARALLEL" yaml:"parallel"`
	// FairSlice is a backlogged producer's share of projection time per transaction while other producers are
	// active (sized from the measured cost per event, at least 10 events). Light producers do not wait for it
	// (their events go in an express transaction beside it) unless they lock the same nodes; it sets the round
	// robin between backlogged producers and what they lose to per-transaction overhead (~45 ms a transaction
	// on the 2-core machine: ~90 % of the unshared throughput at 500 ms; docs/permissions.md, issue 13 item 8).
	FairSlice time.Duration `help:"Projection time a backlogged producer takes per transaction while other producers are active." default:"500ms" env:"HEADWATER_CONSUMER_FAIR_SLICE" yaml:"fairSlice"`
	// FoldStateMiB, JobStateMiB and RecentEventsMiB bound the projector's three in-memory caches by their
	// estimated resident bytes: the dataset fold state (foldstate.DefaultMaxBytes, 1 GiB), the job fold state
	// (project.JobStateMaxBytes, 512 MiB; ADR 0079) and the recent committed events (project.RecentEventsMaxBytes,
	// 256 MiB). Together with in-flight batches they are the projector's live heap, which should stay under half of
	// the soft memory limit (GOMEMLIMIT, 4 GiB by default; ADR 0046).
	FoldStateMiB    int `name:"fold-state-mib" help:"MiB of dataset fold state the projector keeps in memory (0: the default, 1024)." default:"1024" env:"HEADWATER_CONSUMER_FOLD_STATE_MIB" yaml:"foldStateMiB"`
	JobStateMiB     int `name:"job-state-mib" help:"MiB of job fold state the projector keeps in memory (0: the default, 512)." default:"512" env:"HEADWATER_CONSUMER_JOB_STATE_MIB" yaml:"jobStateMiB"`
	RecentEventsMiB int `name:"recent-events-mib" help:"MiB of recently committed events the projector keeps in memory (0: the default, 256)." default:"256" env:"HEADWATER_CONSUMER_RECENT_EVENTS_MIB" yaml:"recentEventsMiB"`
}

// maxCacheMiB bounds FoldStateMiB, JobStateMiB and RecentEventsMiB (64 GiB).
const maxCacheMiB = 64 << 10

// MemoryBounds is the projector's cache bounds this configuration sets (zero fields: the projector's defaults).
func (c Config) MemoryBounds() project.MemoryBounds {
	return project.MemoryBounds{FoldStateBytes: int64(c.FoldStateMiB) << 20, JobStateBytes: int64(c.JobStateMiB) << 20,
		RecentEventsBytes: int64(c.RecentEventsMiB) << 20}
}

// fairSlice is FairSlice, or its default when unset.
func (c Config) fairSlice() time.Duration {
	if c.FairSlice <= 0 {
		return DefaultFairSlice
	}
	return c.FairSlice
}

// txMaxEvents is TxMaxEvents, or its default when unset. It is independent of BatchSize: a transaction merges
// several partitions' batches.
func (c Config) txMaxEvents() int {
	if c.TxMaxEvents <= 0 {
		return DefaultTxMaxEvents
	}
	return c.TxMaxEvents
}

// txMaxTime is TxMaxTime, or its default when unset.
func (c Config) txMaxTime() time.Duration {
	if c.TxMaxTime <= 0 {
		return DefaultTxMaxTime
	}
	return c.TxMaxTime
}

// fetch is FetchMinBytes and FetchMaxWait, or their defaults when unset.
func (c Config) fetch() (int32, time.Duration) {
	minBytes, wait := c.FetchMinBytes, c.FetchMaxWait
	if minBytes <= 0 {
		minBytes = DefaultFetchMinBytes
	}
	if wait <= 0 {
		wait = DefaultFetchMaxWait
	}
	return minBytes, wait
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	if c.BatchSize < 1 || c.BatchSize > 10000 {
		return fmt.Errorf("consumer.batch-size: must be between 1 and 10000, got %d", c.BatchSize)
	}
	if c.BatchWait <= 0 {
		return errors.New("consumer.batch-wait: must be positive")
	}
	if c.Parallel < 1 || c.Parallel > 64 {
		return fmt.Errorf("consumer.parallel: must be between 1 and 64, got %d", c.Parallel)
	}
	if c.TxMaxEvents < 0 || c.TxMaxEvents > 10000 {
		return fmt.Errorf("consumer.tx-max-events: must be between 0 (the default, %d) and 10000, got %d", DefaultTxMaxEvents, c.TxMaxEvents)
	}
	if c.TxMaxTime < 0 || c.TxMaxTime > time.Minute {
		return fmt.Errorf("consumer.tx-max-time: must be between 0 (the default, %s) and 1m, got %s", DefaultTxMaxTime, c.TxMaxTime)
	}
	if c.FetchMinBytes < 0 || c.FetchMinBytes > 16<<20 {
		return fmt.Errorf("consumer.fetch-min-bytes: must be between 0 (the default, %d) and 16 MiB, got %d", DefaultFetchMinBytes, c.FetchMinBytes)
	}
	if c.FetchMaxWait < 0 || c.FetchMaxWait > 10*time.Second {
		return fmt.Errorf("consumer.fetch-max-wait: must be between 0 (the default, %s) and 10s, got %s", DefaultFetchMaxWait, c.FetchMaxWait)
	}
	if c.FairSlice < 0 || c.FairSlice > time.Minute {
		return fmt.Errorf("consumer.fair-slice: must be between 0 (the default, 500ms) and 1m, got %s", c.FairSlice)
	}
	if c.FoldStateMiB < 0 || c.FoldStateMiB > maxCacheMiB {
		return fmt.Errorf("consumer.fold-state-mib: must be between 0 (the default, 1024) and %d, got %d", maxCacheMiB, c.FoldStateMiB)
	}
	if c.JobStateMiB < 0 || c.JobStateMiB > maxCacheMiB {
		return fmt.Errorf("consumer.job-state-mib: must be between 0 (the default, 512) and %d, got %d", maxCacheMiB, c.JobStateMiB)
	}
	if c.RecentEventsMiB < 0 || c.RecentEventsMiB > maxCacheMiB {
		return fmt.Errorf("consumer.recent-events-mib: must be between 0 (the default, 256) and %d, got %d", maxCacheMiB, c.RecentEventsMiB)
	}
	return nil
}
