package olevent

import (
	"fmt"
	"time"
)

// Default limits. They are generous for real producers (a wide Spark job has a few hundred datasets and a few
// dozen facets each) and small enough that one event cannot exhaust the decoder.
const (
	DefaultMaxFacetsPerEntity = 100
	DefaultMaxJSONDepth       = 64
	DefaultMaxStringBytes     = 1 << 20 // 1 MiB: large SQL and source code facets fit
	DefaultMaxDatasets        = 1000
	DefaultMaxFuture          = 10 * time.Minute
	DefaultHorizon            = 400 * 24 * time.Hour // a year of history plus slack for replays

	// minJSONDepth is the smallest usable depth: a RunEvent needs envelope > outputs > item > facets > facet.
	minJSONDepth = 6
	// MaxEventIDBytes is the longest producer-supplied event id used verbatim; longer ones are hashed.
	MaxEventIDBytes = 256
	// MaxDbtUniqueIDBytes is the longest dbt_node.unique_id taken as a job's stable id (ADR 0027); a longer one
	// is a facet warning and the job keeps its name identity. dbt's own ids are a few hundred bytes at most.
	MaxDbtUniqueIDBytes = 1024
)

// MaxSyntaxDepth is the deepest nesting the standard library's JSON checker accepts (encoding/json's own limit);
// MaxJSONDepth may not exceed it, so nesting beyond the configured limit is always reported as max-depth.
const MaxSyntaxDepth = 10000

// Limits bound what one event may contain. Every field must be positive.
type Limits struct {
	MaxFacetsPerEntity int           // facets per run/job/dataset
	MaxJSONDepth       int           // nesting depth of the whole document
	MaxStringBytes     int           // any single JSON string value (and object key)
	MaxDatasets        int           // inputs + outputs
	MaxFuture          time.Duration // eventTime later than now+MaxFuture is rejected
	Horizon            time.Duration // eventTime earlier than now-Horizon is rejected
}

// DefaultLimits returns the named default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxFacetsPerEntity: DefaultMaxFacetsPerEntity,
		MaxJSONDepth:       DefaultMaxJSONDepth,
		MaxStringBytes:     DefaultMaxStringBytes,
		MaxDatasets:        DefaultMaxDatasets,
		MaxFuture:          DefaultMaxFuture,
		Horizon:            DefaultHorizon,
	}
}

// InvalidLimitsError names the limit that is out of range.
type InvalidLimitsError struct {
	Limit  string
	Reason string
}

func (e *InvalidLimitsError) Error() string {
	return fmt.Sprintf("olevent: invalid limit %s: %s", e.Limit, e.Reason)
}

// Validate reports the first limit that is not usable.
func (l Limits) Validate() error {
	checks := []struct {
		name string
		ok   bool
		why  string
	}{
		{"MaxFacetsPerEntity", l.MaxFacetsPerEntity > 0, "must be positive"},
		{"MaxJSONDepth", l.MaxJSONDepth >= minJSONDepth && l.MaxJSONDepth <= MaxSyntaxDepth,
			fmt.Sprintf("must be between %d and %d", minJSONDepth, MaxSyntaxDepth)},
		{"MaxStringBytes", l.MaxStringBytes > 0, "must be positive"},
		{"MaxDatasets", l.MaxDatasets > 0, "must be positive"},
		{"MaxFuture", l.MaxFuture > 0, "must be positive"},
		{"Horizon", l.Horizon > 0, "must be positive"},
	}
	for _, c := range checks {
		if !c.ok {
			return &InvalidLimitsError{Limit: c.name, Reason: c.why}
		}
	}
	return nil
}
