package main

import (
	"fmt"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// WorldFlags shape the generated world; the same flags (seed included) give the same world in every command.
type WorldFlags struct {
	Seed              uint64  `help:"Random seed: same seed, same bytes." default:"1"`
	Prefix            string  `help:"Namespace prefix put on every dataset host and job namespace ([a-z0-9-])." default:"lt"`
	Datasets          int     `help:"Number of datasets." default:"30000"`
	RunsPerDay        int     `help:"Simulated runs per day across all jobs." default:"200000"`
	Hubs              int     `help:"Hub datasets (0: one per 3,000 datasets)." default:"0"`
	HubConsumers      int     `help:"Minimum consumer jobs per hub." default:"1000"`
	ColumnShare       float64 `help:"Share of job outputs with a columnLineage facet." default:"0.25"`
	StagingShare      float64 `help:"Share of datasets in the staging environment." default:"0.2"`
	StreamingShare    float64 `help:"Share of jobs that are streaming (Flink)." default:"0.03"`
	FailShare         float64 `help:"Runs ending in FAIL with partial output." default:"0.04"`
	AbortShare        float64 `help:"Runs ending in ABORT with partial output." default:"0.01"`
	RetryShare        float64 `help:"Runs retried under the same runId." default:"0.02"`
	LateShare         float64 `help:"Events delivered late." default:"0.02"`
	DupShare          float64 `help:"Events delivered twice." default:"0.01"`
	RenameShare       float64 `help:"Runs that rename an output." default:"0.0005"`
	JobEventShare     float64 `help:"Runs followed by a JobEvent." default:"0.005"`
	DatasetEventShare float64 `help:"Runs followed by a DatasetEvent." default:"0.005"`
	Start             string  `help:"Simulated start (RFC 3339); empty: chosen by the command so events end near now." default:""`
}

// config builds the generator config; defStart is used when --start is empty.
func (f WorldFlags) config(defStart time.Time) (gen.Config, error) {
	start := defStart
	if f.Start != "" {
		t, err := time.Parse(time.RFC3339, f.Start)
		if err != nil {
			return gen.Config{}, fmt.Errorf("--start: %w", err)
		}
		start = t
	}
	c := gen.DefaultConfig(f.Seed, start)
	c.Prefix, c.Datasets, c.RunsPerDay, c.Hubs, c.HubConsumers = f.Prefix, f.Datasets, f.RunsPerDay, f.Hubs, f.HubConsumers
	c.ColumnShare, c.StagingShare, c.StreamingShare = f.ColumnShare, f.StagingShare, f.StreamingShare
	c.FailShare, c.AbortShare, c.RetryShare = f.FailShare, f.AbortShare, f.RetryShare
	c.LateShare, c.DupShare, c.RenameShare = f.LateShare, f.DupShare, f.RenameShare
	c.JobEventShare, c.DatasetEventShare = f.JobEventShare, f.DatasetEventShare
	return c, c.Validate()
}

func (f WorldFlags) world(defStart time.Time) (*gen.World, error) {
	c, err := f.config(defStart)
	if err != nil {
		return nil, err
	}
	return gen.NewWorld(c)
}

// eventsPerDay is the simulated event rate of a config (about 2.5 events per run).
func eventsPerDay(c gen.Config) float64 { return float64(c.RunsPerDay) * 2.5 }

// startFor picks a simulated start so that about n events end near now.
func startFor(c gen.Config, n float64, now time.Time) time.Time {
	span := time.Duration(n / eventsPerDay(c) * float64(24*time.Hour))
	return now.Add(-span - time.Hour).UTC().Truncate(time.Second)
}
