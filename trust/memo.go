package trust

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Memoized returns the service at one instant (its clock stopped now) reading through a memo that keeps every
// row set it read for the service's lifetime: the sampler computes a round's reports, and a scope's values for
// everything and its inside-only values, from one set of reads (the figures only read the rows they get). Not
// for request paths: nothing is ever evicted.
func (s *Service) Memoized() *Service {
	m := *s
	now := s.clock()
	m.clock = func() time.Time { return now }
	m.r = &memoReader{Reader: s.r, m: map[string]any{}}
	return &m
}

// memoReader keeps the row sets of the signals' reads, by method and arguments.
type memoReader struct {
	Reader
	mu sync.Mutex
	m  map[string]any
}

func memo[T any](r *memoReader, key string, read func() (T, error)) (T, error) {
	r.mu.Lock()
	v, ok := r.m[key]
	r.mu.Unlock()
	if ok {
		return v.(T), nil
	}
	out, err := read()
	if err != nil {
		return out, err
	}
	r.mu.Lock()
	r.m[key] = out
	r.mu.Unlock()
	return out, nil
}

func (r *memoReader) Canaries(ctx context.Context) ([]CanaryRow, error) {
	return memo(r, "canaries", func() ([]CanaryRow, error) { return r.Reader.Canaries(ctx) })
}

func (r *memoReader) Runs(ctx context.Context, f Filter, from, cutoff int64) ([]JobRuns, error) {
	return memo(r, fmt.Sprint("runs", f, from, cutoff), func() ([]JobRuns, error) { return r.Reader.Runs(ctx, f, from, cutoff) })
}

func (r *memoReader) Edges(ctx context.Context, f Filter, now int64) ([]EdgeRow, error) {
	return memo(r, fmt.Sprint("edges", f, now), func() ([]EdgeRow, error) { return r.Reader.Edges(ctx, f, now) })
}

func (r *memoReader) WrittenDatasets(ctx context.Context, f Filter, now int64) ([]DatasetRow, error) {
	return memo(r, fmt.Sprint("written", f, now), func() ([]DatasetRow, error) { return r.Reader.WrittenDatasets(ctx, f, now) })
}

func (r *memoReader) Unresolved(ctx context.Context, f Filter, from int64) ([]UnresolvedRow, error) {
	return memo(r, fmt.Sprint("unresolved", f, from), func() ([]UnresolvedRow, error) { return r.Reader.Unresolved(ctx, f, from) })
}

func (r *memoReader) ExpectedJobs(ctx context.Context, f Filter) ([]ExpectedRow, error) {
	return memo(r, fmt.Sprint("expected", f), func() ([]ExpectedRow, error) { return r.Reader.ExpectedJobs(ctx, f) })
}

func (r *memoReader) JobsNamed(ctx context.Context, names [][2]string) ([]ReportedJob, error) {
	return memo(r, fmt.Sprint("named", names), func() ([]ReportedJob, error) { return r.Reader.JobsNamed(ctx, names) })
}

func (r *memoReader) DbtJobs(ctx context.Context, namespace string) ([]ReportedJob, error) {
	return memo(r, "dbt\x1f"+namespace, func() ([]ReportedJob, error) { return r.Reader.DbtJobs(ctx, namespace) })
}

// Activity answers one producer from the memo of every producer's activity (the read narrows by principal
// only), so a round of producer scopes reads the events once.
func (r *memoReader) Activity(ctx context.Context, producer string, from int64) ([]ActivityRow, error) {
	all, err := memo(r, fmt.Sprint("activity", from), func() ([]ActivityRow, error) { return r.Reader.Activity(ctx, "", from) })
	return ofProducer(all, err, producer, func(a ActivityRow) string { return a.Producer })
}

// Rejections answers one producer from the memo of every producer's rejections, as Activity.
func (r *memoReader) Rejections(ctx context.Context, producer string, from int64) ([]RejectRow, error) {
	all, err := memo(r, fmt.Sprint("rejections", from), func() ([]RejectRow, error) { return r.Reader.Rejections(ctx, "", from) })
	return ofProducer(all, err, producer, func(x RejectRow) string { return x.Producer })
}

// ofProducer keeps the rows of one producer ("" keeps all).
func ofProducer[T any](all []T, err error, producer string, of func(T) string) ([]T, error) {
	if err != nil || producer == "" {
		return all, err
	}
	var out []T
	for _, x := range all {
		if of(x) == producer {
			out = append(out, x)
		}
	}
	return out, nil
}
