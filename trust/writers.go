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
	rows, err := s.indexedWritersOf(ctx, outputs)
	if err != nil {
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

// indexedWritersOf returns the active expected jobs listing one of outputs, with their matches: from the
// in-memory index (index.go) without any read while it is younger than ExpectedIndexTTL, else (too many
// expected jobs to keep) from the store, with the matches read for them.
func (s *Service) indexedWritersOf(ctx context.Context, outputs []string) ([]ExpectedRow, error) {
	idx, err := s.writerIndex(ctx)
	if err != nil {
		return nil, err
	}
	if !idx.tooBig {
		return idx.of(outputs), nil
	}
	rows, err := s.r.ExpectedWritersOf(ctx, outputs)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].Matched = nil // withNameMatches adds them
	}
	if err := s.withNameMatches(ctx, rows); err != nil {
		return nil, err
	}
	return s.withDbtMatches(ctx, rows)
}
