// Package gapsource is what the lineage gaps (JOB_NOT_REPORTING, PRODUCER_STALE, the answer's coverage; ADR
// 0032) ask of the trust signals: the expected writers of an answer's datasets with their status now, filtered to
// the caller (from an in-memory index of expected writers by output, ADR 0034), the sentence about one, and the
// producers of an answer's jobs with their health now. Its consumer is lineage/trustgaps (its Source interface);
// it applies trust's matching, permission and status rules (trust.Service) and reads through the Reader it
// declares (truststore.Store).
//
// Invariants: nothing the caller may not describe is returned by ExpectedWriters; the answers are about now,
// whatever the answer's asOf; a read that fails is trust.ErrUnavailable (an answer without its gaps would look
// complete).
package gapsource

import (
	"context"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust"
)

// Reader is what the gaps read (truststore.Store).
type Reader interface {
	ExpectedJobs(ctx context.Context, f trust.Filter) ([]trust.ExpectedRow, error)
	ExpectedWritersOf(ctx context.Context, outputs []string) ([]trust.ExpectedRow, error)
	JobProducers(ctx context.Context, jobKeys []string) (map[string][]JobProducer, error)
	Activity(ctx context.Context, producer string, from int64) ([]trust.ActivityRow, error)
}

// Source answers the lineage gaps' questions.
type Source struct {
	sig     *trust.Service
	r       Reader
	commits CommitReader // nil: no UNREPORTED_WRITE figures
	clock   func() time.Time
	writers writerIndex
	health  healthCache
}

// New is the gaps' source over the trust signals sig (their rules and permissions) and r; a nil clock is time.Now.
// When r also reads catalog commits (CommitReader), the source judges UNREPORTED_WRITE.
func New(sig *trust.Service, r Reader, clock func() time.Time) *Source {
	if clock == nil {
		clock = time.Now
	}
	cr, _ := r.(CommitReader)
	return &Source{sig: sig, r: r, commits: cr, clock: clock}
}

// ExpectedWriters is the interface the lineage gaps (JOB_NOT_REPORTING, answer coverage) use: the active
// expected jobs that list one of the datasets as an expected output ("namespace|name", canonical as the
// registry stores them), each with its status now, keeping only those the caller may describe (under the
// expected identity and every reported job it matched). The caller counts what it gets; nothing it may not see
// is in it.
func (s *Source) ExpectedWriters(ctx context.Context, caller authz.Principal, outputs []string) ([]trust.JobStatus, error) {
	if len(outputs) == 0 {
		return nil, nil
	}
	rows, err := s.indexedWritersOf(ctx, outputs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
	}
	vis, err := s.sig.Visible(ctx, caller, rows)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", trust.ErrUnavailable, err)
	}
	now := s.clock().UTC()
	out := make([]trust.JobStatus, len(vis))
	for i, e := range vis {
		out[i] = s.sig.StatusAt(e, now)
	}
	return out, nil
}

// indexedWritersOf returns the active expected jobs listing one of outputs, with their matches: from the
// in-memory index (index.go) without any read while it is younger than ExpectedIndexTTL, else (too many
// expected jobs to keep) from the store, with the matches read for them.
func (s *Source) indexedWritersOf(ctx context.Context, outputs []string) ([]trust.ExpectedRow, error) {
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
	return s.sig.WithMatches(ctx, rows)
}
