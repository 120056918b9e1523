package trust

import (
	"context"
	"fmt"
	"slices"

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
	rows, err := s.expectedWritersOf(ctx, outputs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := s.withNameMatches(ctx, rows); err != nil {
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

// expectedWritersOf returns the active expected jobs listing one of outputs, without matches: from the expected
// jobs kept in memory while the inventory version holds (one small read per call), else (too many to keep) one
// read of the store.
func (s *Service) expectedWritersOf(ctx context.Context, outputs []string) ([]ExpectedRow, error) {
	all, err := s.inventory.rows(ctx, s.r, Filter{})
	if err != nil {
		return nil, err
	}
	if s.inventory.large() {
		rows, err := s.r.ExpectedWritersOf(ctx, outputs)
		for i := range rows {
			rows[i].Matched = nil // withNameMatches adds them
		}
		return rows, err
	}
	want := make(map[string]bool, len(outputs))
	for _, o := range outputs {
		want[o] = true
	}
	var rows []ExpectedRow
	for _, e := range all {
		if slices.ContainsFunc(e.Outputs, func(o string) bool { return want[o] }) {
			e.Matched = nil // a copy: the cached row is never changed
			rows = append(rows, e)
		}
	}
	return rows, nil
}
