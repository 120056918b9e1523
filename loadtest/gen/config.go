package gen

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Defaults are the design inputs of DESIGN.md ("Scale we design for").
const (
	DefaultDatasets     = 30000
	DefaultRunsPerDay   = 200000
	DefaultHubConsumers = 1000
	DefaultColumnShare  = 0.25
	datasetsPerHub      = 3000 // one hub per this many datasets
	maxFieldsPerDataset = 16
	minFieldsPerDataset = 4
)

var prefixPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// Config is the shape of the generated world and traffic. Every share is a probability in [0,1].
type Config struct {
	Seed              uint64    // same seed, same bytes
	Prefix            string    // lower-case [a-z0-9-]; put at the front of every namespace host and job namespace
	Datasets          int       // number of datasets in the world
	StagingShare      float64   // share of datasets (and jobs) in the staging environment, the rest are prod
	HubConsumers      int       // minimum number of consumer jobs of each hub dataset
	Hubs              int       // number of hubs; 0 means one per 3,000 datasets (at least one)
	ColumnShare       float64   // share of job outputs that carry a columnLineage facet
	RunsPerDay        int       // simulated runs per day across all jobs
	Start             time.Time // simulated time of the first run
	FailShare         float64   // runs that end in FAIL with partial output
	AbortShare        float64   // runs that end in ABORT with partial output
	RetryShare        float64   // runs retried under the same runId (START, FAIL, START, COMPLETE)
	LateShare         float64   // events delivered late (after later events of the same run)
	DupShare          float64   // events delivered twice (identical bytes)
	RenameShare       float64   // runs whose output is renamed (lifecycleStateChange RENAME) on that run
	JobEventShare     float64   // runs followed by a JobEvent for their job
	DatasetEventShare float64   // runs followed by a DatasetEvent for one of their outputs
	StreamingShare    float64   // share of jobs that are streaming (Flink, processingType STREAMING)
}

// DefaultConfig returns the design-size configuration starting at start.
func DefaultConfig(seed uint64, start time.Time) Config {
	return Config{
		Seed: seed, Prefix: "lt", Datasets: DefaultDatasets, StagingShare: 0.2,
		HubConsumers: DefaultHubConsumers, ColumnShare: DefaultColumnShare, RunsPerDay: DefaultRunsPerDay,
		Start: start.UTC(), FailShare: 0.04, AbortShare: 0.01, RetryShare: 0.02, LateShare: 0.02,
		DupShare: 0.01, RenameShare: 0.0005, JobEventShare: 0.005, DatasetEventShare: 0.005,
		StreamingShare: 0.03,
	}
}

// HubCount is the effective number of hubs.
func (c Config) HubCount() int {
	if c.Hubs > 0 {
		return c.Hubs
	}
	return max(1, c.Datasets/datasetsPerHub)
}

// ErrConfig is returned for an invalid configuration.
var ErrConfig = errors.New("invalid generator config")

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	shares := map[string]float64{"staging-share": c.StagingShare, "column-share": c.ColumnShare,
		"fail-share": c.FailShare, "abort-share": c.AbortShare, "retry-share": c.RetryShare,
		"late-share": c.LateShare, "dup-share": c.DupShare, "rename-share": c.RenameShare,
		"job-event-share": c.JobEventShare, "dataset-event-share": c.DatasetEventShare,
		"streaming-share": c.StreamingShare}
	for name, v := range shares {
		if v < 0 || v > 1 {
			return fmt.Errorf("%w: %s must be in [0,1], got %g", ErrConfig, name, v)
		}
	}
	switch {
	case c.Prefix != "" && !prefixPattern.MatchString(c.Prefix):
		return fmt.Errorf("%w: prefix %q must match %s", ErrConfig, c.Prefix, prefixPattern)
	case c.Datasets < 20:
		return fmt.Errorf("%w: datasets must be at least 20, got %d", ErrConfig, c.Datasets)
	case c.RunsPerDay < 1:
		return fmt.Errorf("%w: runs-per-day must be positive, got %d", ErrConfig, c.RunsPerDay)
	case c.HubConsumers < 1:
		return fmt.Errorf("%w: hub-consumers must be positive, got %d", ErrConfig, c.HubConsumers)
	case c.FailShare+c.AbortShare+c.RetryShare > 1:
		return fmt.Errorf("%w: fail+abort+retry shares exceed 1", ErrConfig)
	case c.Start.IsZero():
		return fmt.Errorf("%w: start time must be set", ErrConfig)
	}
	return nil
}
