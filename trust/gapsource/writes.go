package gapsource

import (
	"context"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust"
)

// Commit is one catalog commit of a dataset (an Iceberg snapshot the catalog sync recorded as a DatasetVersion
// with its commit time) and the jobs whose runs reported writing it (WROTE.datasetVersion = the snapshot id).
type Commit struct {
	DatasetKey, Version string
	At                  int64 // ms
	Writers             []trust.JobRef
}

// CommitReader reads the latest commits of datasets (truststore.Store).
type CommitReader interface {
	Commits(ctx context.Context, datasetKeys []string, before int64, perDataset int) ([]Commit, error)
}

// Unreported is one dataset's UNREPORTED_WRITE figure: of its last Judged catalog commits older than the write
// grace, Unreported came from no run the caller may see; Latest is the newest of those.
type Unreported struct {
	DatasetKey         string
	Unreported, Judged int
	Latest             time.Time
}

// UnreportedWrites judges the last trust.MaxCommitsJudged catalog commits of each dataset older than the write
// grace: a commit is reported when a run of a job the caller may describe wrote it. A commit whose only writers
// are hidden from the caller counts as unreported to it, so the figure never tells a hidden job exists. Datasets
// with no unreported commit are left out.
func (s *Source) UnreportedWrites(ctx context.Context, caller authz.Principal, datasetKeys []string) ([]Unreported, error) {
	if len(datasetKeys) == 0 || s.commits == nil {
		return nil, nil
	}
	before := s.clock().Add(-s.sig.Config().WriteGrace).UnixMilli()
	commits, err := s.commits.Commits(ctx, datasetKeys, before, trust.MaxCommitsJudged)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
	}
	var jobs []trust.JobRef
	for _, c := range commits {
		jobs = append(jobs, c.Writers...)
	}
	seen := make([]bool, len(jobs))
	if len(jobs) > 0 {
		if seen, err = s.sig.DescribableJobs(ctx, caller, jobs); err != nil {
			return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
		}
	}
	by := map[string]*Unreported{}
	var order []string
	i := 0
	for _, c := range commits {
		u := by[c.DatasetKey]
		if u == nil {
			u = &Unreported{DatasetKey: c.DatasetKey}
			by[c.DatasetKey] = u
			order = append(order, c.DatasetKey)
		}
		u.Judged++
		reported := false
		for range c.Writers {
			reported = reported || seen[i]
			i++
		}
		if !reported {
			u.Unreported++
			if at := time.UnixMilli(c.At).UTC(); at.After(u.Latest) {
				u.Latest = at
			}
		}
	}
	var out []Unreported
	for _, k := range order {
		if by[k].Unreported > 0 {
			out = append(out, *by[k])
		}
	}
	return out, nil
}
