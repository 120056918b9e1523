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
)

// Defaults for batching.
const (
	DefaultBatchSize = 2000
	DefaultBatchWait = 500 * time.Millisecond
	DefaultFairSlice = 500 * time.Millisecond
	retryBackoff     = 2 * time.Second // when Neo4j is unreachable, wait before retrying the same batch
	epochRetry       = time.Second     // how often a missed cache-epoch bump is retried
)

// Config is the consumer configuration.
type Config struct {
	BatchSize int           `help:"Most messages projected in one Neo4j batch." default:"2000" env:"HEADWATER_CONSUMER_BATCH_SIZE" yaml:"batchSize"`
	BatchWait time.Duration `help:"Longest a message waits, from its Kafka timestamp, for its batch to fill." default:"500ms" env:"HEADWATER_CONSUMER_BATCH_WAIT" yaml:"batchWait"`
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
}

// fairSlice is FairSlice, or its default when unset.
func (c Config) fairSlice() time.Duration {
	if c.FairSlice <= 0 {
		return DefaultFairSlice
	}
	return c.FairSlice
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
	if c.FairSlice < 0 || c.FairSlice > time.Minute {
		return fmt.Errorf("consumer.fair-slice: must be between 0 (the default, 500ms) and 1m, got %s", c.FairSlice)
	}
	return nil
}
