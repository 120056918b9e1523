package trust

import (
	"context"
	"fmt"

	"github.com/headwater-data/headwater/authz"
)

// ExpectedWriters is the interface the lineage gaps (JOB_NOT_REPORTING, answer coverage) use: the active
// expected jobs that list one of the datasets as an expected output ("namespace|name", canonical as the
// registry stores them), each with its status now, keeping only those the caller may describe (under the
// expected identity and every reported job it matched). The caller counts what it gets; nothing it may not see
// is in it.
func (s *Service) ExpectedWriters(ctx context.Context, caller authz.Principal, outputs []string) ([]JobStatus, error) {
	if len(outputs) == 0 {
		return nil, nil
	}
	rows, err := s.r.ExpectedWritersOf(ctx, outputs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if rows, err = s.withDbtMatches(ctx, rows); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	vis, err := s.visibleJobs(ctx, caller, rows)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	now := s.clock().UTC()
	out := make([]JobStatus, len(vis))
	for i, e := range vis {
		out[i] = s.status(e, now)
	}
	return out, nil
}
