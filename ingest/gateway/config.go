// Package gateway is the HTTP front door for OpenLineage events (POST /api/v1/lineage and /api/v1/lineage/batch,
// compatible with the OpenLineage HTTP transport). It validates each event, answers 2xx only after Kafka has
// acknowledged it (acks=all), answers 4xx naming the field and the rule for bad input and puts a copy of that input
// on the quarantine topic, and 503/429 with Retry-After when Kafka is down or a producer is over its rate.
package gateway

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for the gateway's limits.
const (
	DefaultMaxBodyBytes   = 5 << 20 // one event or one batch, after gzip decompression
	DefaultMaxBatchEvents = 1000
	DefaultRatePerSecond  = 2000 // per producer principal
	DefaultRateBurst      = 4000
	// DefaultRecentIDs is how many accepted (principal, event id) pairs the gateway remembers to answer an id
	// reused for other content with 409: the last 50,000 accepted events (25 s of one producer at its rate limit;
	// at most ~20 MB). Older conflicts are quarantined by the projector (rule id-conflict).
	DefaultRecentIDs = 50_000
	// DefaultMaxInFlightBytes bounds the request bodies held at once (read, decoded, waiting for Kafka): 64 MiB,
	// a dozen bodies at the 5 MiB limit, thousands of ordinary ones (~4 KB an event). A body costs about four times
	// its size while decoded and produced, so the budget is ~256 MiB of heap (measured: 219-265 MiB of peak RSS
	// growth under 48 concurrent 4 MiB uploads), far under the process's memory limit (cmd/headwater/main.go);
	// over it requests are shed with 503 (ADR 0048, docs/operations.md).
	DefaultMaxInFlightBytes = 64 << 20
	quarantinePrefixBytes   = 64 << 10 // oversized bodies are quarantined as a prefix plus their digest and size
	retryAfterUnavailable   = 5 * time.Second
	retryAfterOverloaded    = time.Second // a shed request may fit a second later: the bodies in flight take ms
)

// Config is the gateway configuration.
type Config struct {
	MaxBodyBytes   int64   `help:"Largest request body (after gzip decompression)." default:"5242880" env:"HEADWATER_GATEWAY_MAX_BODY_BYTES" yaml:"maxBodyBytes"`
	MaxBatchEvents int     `help:"Most events in one batch request." default:"1000" env:"HEADWATER_GATEWAY_MAX_BATCH_EVENTS" yaml:"maxBatchEvents"`
	RatePerSecond  float64 `help:"Events per second each producer principal may send (0 disables)." default:"2000" env:"HEADWATER_GATEWAY_RATE_PER_SECOND" yaml:"ratePerSecond"`
	RateBurst      int     `help:"Burst of events per producer principal." default:"4000" env:"HEADWATER_GATEWAY_RATE_BURST" yaml:"rateBurst"`
	RecentIDs      int     `help:"Accepted event ids remembered to answer an id reused for other content with 409 (0 disables)." default:"50000" env:"HEADWATER_GATEWAY_RECENT_IDS" yaml:"recentIds"`
	// MaxInFlightBytes: see DefaultMaxInFlightBytes.
	MaxInFlightBytes int64 `help:"Request body bytes the gateway holds at once (reading, decoding, waiting for Kafka); a request that does not fit is answered 503 with Retry-After." default:"67108864" env:"HEADWATER_GATEWAY_MAX_IN_FLIGHT_BYTES" yaml:"maxInFlightBytes"`
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	switch {
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("gateway.max-body-bytes: must be at least 1024, got %d", c.MaxBodyBytes)
	case c.MaxBatchEvents < 1:
		return errors.New("gateway.max-batch-events: must be at least 1")
	case c.RatePerSecond < 0:
		return errors.New("gateway.rate-per-second: must not be negative")
	case c.RatePerSecond > 0 && c.RateBurst < 1:
		return errors.New("gateway.rate-burst: must be at least 1 when a rate is set")
	case c.MaxInFlightBytes < c.MaxBodyBytes:
		return fmt.Errorf("gateway.max-in-flight-bytes: must be at least gateway.max-body-bytes (%d), got %d", c.MaxBodyBytes, c.MaxInFlightBytes)
	case c.RecentIDs < 0 || c.RecentIDs > 10_000_000:
		return fmt.Errorf("gateway.recent-ids: must be between 0 and 10000000, got %d", c.RecentIDs)
	}
	return nil
}
