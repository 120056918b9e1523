package lineage

import (
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/internal/seal"
)

// Config holds the query engine's budgets and keys. Zero values are replaced by the defaults in budgets.go.
type Config struct {
	MaxDepth       int           `help:"Hops per lineage page (server depth cap)." default:"20" env:"HEADWATER_LINEAGE_MAX_DEPTH" yaml:"maxDepth"`
	MaxNodes       int           `help:"Default node budget per page." default:"500" env:"HEADWATER_LINEAGE_MAX_NODES" yaml:"maxNodes"`
	MaxNodesCap    int           `help:"Largest node budget a request may ask for." default:"5000" env:"HEADWATER_LINEAGE_MAX_NODES_CAP" yaml:"maxNodesCap"`
	FanOut         int           `help:"Neighbours of one node per page." default:"200" env:"HEADWATER_LINEAGE_FAN_OUT" yaml:"fanOut"`
	Deadline       time.Duration `help:"Time budget of one lineage page." default:"5s" env:"HEADWATER_LINEAGE_DEADLINE" yaml:"deadline"`
	StaleMin       time.Duration `help:"Smallest staleness threshold of an observed edge." default:"24h" env:"HEADWATER_LINEAGE_STALE_MIN" yaml:"staleMin"`
	StaleFactor    float64       `help:"Staleness threshold as a multiple of the job's usual run interval." default:"3" env:"HEADWATER_LINEAGE_STALE_FACTOR" yaml:"staleFactor"`
	CursorKey      string        `help:"HMAC key signing lineage cursors (at least 32 bytes; empty: random per process, cursors do not survive restarts or cross replicas)." env:"HEADWATER_LINEAGE_CURSOR_KEY" yaml:"cursorKey" secret:"true"`
	NowBucket      time.Duration `help:"Bucket of 'now' in cache keys (generations still invalidate an entry on any write)." default:"5m" env:"HEADWATER_LINEAGE_NOW_BUCKET" yaml:"nowBucket"`
	RawCacheTTL    time.Duration `help:"TTL of cached neighbour lists." default:"10m" env:"HEADWATER_LINEAGE_RAW_CACHE_TTL" yaml:"rawCacheTTL"`
	ResultCacheTTL time.Duration `help:"TTL of cached answers." default:"5m" env:"HEADWATER_LINEAGE_RESULT_CACHE_TTL" yaml:"resultCacheTTL"`
	TrustGapsTTL   time.Duration `help:"How long one answer's trust gaps (JOB_NOT_REPORTING, PRODUCER_STALE, coverage) are reused in process for the same scope; negative: never." default:"10s" env:"HEADWATER_LINEAGE_TRUST_GAPS_TTL" yaml:"trustGapsTTL"`
	// DisableTrustGaps leaves JOB_NOT_REPORTING, PRODUCER_STALE and the answer's coverage off every answer; it
	// exists to measure their cost on the same server (scripts/bench-trust.sh), not for production.
	DisableTrustGaps bool `help:"Answers carry no trust gaps (JOB_NOT_REPORTING, PRODUCER_STALE, coverage): for measuring their cost, not for production." env:"HEADWATER_LINEAGE_DISABLE_TRUST_GAPS" yaml:"disableTrustGaps"`
}

// minCursorKey is the shortest accepted cursor signing key.
const minCursorKey = seal.MinKey

// WithDefaults fills zero settings with the defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MaxDepth, DefaultMaxDepth)
	def(&c.MaxNodes, DefaultMaxNodes)
	def(&c.MaxNodesCap, DefaultMaxNodesCap)
	def(&c.FanOut, DefaultFanOut)
	defD(&c.Deadline, DefaultDeadline)
	defD(&c.StaleMin, DefaultStaleMin)
	defD(&c.NowBucket, DefaultNowBucket)
	defD(&c.RawCacheTTL, DefaultRawCacheTTL)
	defD(&c.ResultCacheTTL, DefaultResultCacheTTL)
	defD(&c.TrustGapsTTL, DefaultTrustGapsTTL)
	if c.StaleFactor == 0 {
		c.StaleFactor = DefaultStaleFactor
	}
	return c
}

// Validate reports the first invalid setting by name (after defaults are applied).
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.MaxDepth < 1 || c.MaxDepth > DefaultMaxDepth:
		return fmt.Errorf("lineage.max-depth: must be 1..%d, got %d", DefaultMaxDepth, c.MaxDepth)
	case c.MaxNodes < 2 || c.MaxNodes > c.MaxNodesCap:
		return fmt.Errorf("lineage.max-nodes: must be 2..max-nodes-cap (%d), got %d", c.MaxNodesCap, c.MaxNodes)
	case c.FanOut < 1:
		return fmt.Errorf("lineage.fan-out: must be at least 1, got %d", c.FanOut)
	case c.Deadline < 0 || c.StaleMin < 0 || c.StaleFactor < 0:
		return errors.New("lineage: deadline, stale-min and stale-factor must not be negative")
	case c.CursorKey != "" && len(c.CursorKey) < minCursorKey:
		return fmt.Errorf("lineage.cursor-key: must be empty (a random per-process key) or at least %d bytes", minCursorKey)
	}
	return nil
}
