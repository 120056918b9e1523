package trust

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust/rules"
)

// jobsMemo holds the expected-job figures of one report and the visible expected jobs they came from.
type jobsMemo struct {
	reporting, instrumented *Figure
	visible                 []JobStatus
}

// JobStatus is one expected job, the reported jobs it matched and its status.
type JobStatus struct {
	ExpectedRow
	Status rules.Status
	Last   time.Time // latest event time of a matched job
}

func (r *Report) expected(ctx context.Context) (*jobsMemo, error) {
	if r.jobs != nil {
		return r.jobs, nil
	}
	rows, err := r.svc.expectedRows(ctx, r.filter())
	if err != nil {
		return nil, err
	}
	vis, err := r.svc.visibleJobs(ctx, r.caller, rows)
	if err != nil {
		return nil, err
	}
	m := &jobsMemo{reporting: &Figure{Signal: SignalJobsReporting,
		Description: "expected jobs with a known schedule (not paused) that reported within it plus grace"},
		instrumented: &Figure{Signal: SignalJobsInstrumented,
			Description: "expected jobs that at least one reported job matches (by the source's naming rules)"}}
	var gr, gi grouper
	for _, row := range vis {
		st := r.svc.status(row, r.Now)
		m.visible = append(m.visible, st)
		r.countJob(m, st, &gr, &gi)
	}
	m.reporting.Groups, m.instrumented.Groups = gr.groups(), gi.groups()
	m.reporting.rep, m.instrumented.rep = r, r
	r.jobs = m
	return m, nil
}

func (r *Report) countJob(m *jobsMemo, st JobStatus, gr, gi *grouper) {
	matched := b2i(len(st.Matched) > 0)
	m.instrumented.Denominator++
	m.instrumented.Numerator += matched
	gi.add("criticality", st.Criticality, matched, 1)
	gi.add("namespace", st.Namespace, matched, 1)
	if matched == 0 {
		m.instrumented.add(r.svc.jobItem(st, r.Now))
	}
	if !rules.Scheduled(time.Duration(st.IntervalMs)*time.Millisecond, st.Paused) {
		return
	}
	ok := b2i(st.Status == rules.StatusReporting)
	m.reporting.Denominator++
	m.reporting.Numerator += ok
	gr.add("criticality", st.Criticality, ok, 1)
	gr.add("namespace", st.Namespace, ok, 1)
	if ok == 0 {
		m.reporting.add(r.svc.jobItem(st, r.Now))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// expectedRows returns the expected jobs of the filter with the reported jobs they match now: the expected jobs
// from the cache while the inventory version holds, the matches read on every call.
func (s *Service) expectedRows(ctx context.Context, f Filter) ([]ExpectedRow, error) {
	all, err := s.inventory.rows(ctx, s.r, f)
	if err != nil {
		return nil, err
	}
	rows := make([]ExpectedRow, 0, len(all))
	for _, e := range all {
		if (f.Namespace == "" || e.Namespace == f.Namespace) && (f.Criticality == "" || e.Criticality == f.Criticality) {
			e.Matched = nil // a copy: the cached row is never changed
			rows = append(rows, e)
		}
	}
	if err := s.withNameMatches(ctx, rows); err != nil {
		return nil, err
	}
	return s.withDbtMatches(ctx, rows)
}

// withNameMatches adds to each row the jobs named by one of its match names in its namespace.
func (s *Service) withNameMatches(ctx context.Context, rows []ExpectedRow) error {
	var names [][2]string
	for _, e := range rows {
		for _, n := range e.MatchNames {
			names = append(names, [2]string{e.Namespace, n})
		}
	}
	if len(names) == 0 {
		return nil
	}
	jobs, err := s.r.JobsNamed(ctx, names)
	if err != nil {
		return err
	}
	byName := map[[2]string][]ReportedJob{}
	for _, j := range jobs {
		byName[[2]string{j.Namespace, j.Name}] = append(byName[[2]string{j.Namespace, j.Name}], j)
	}
	for i, e := range rows {
		for _, n := range e.MatchNames {
			rows[i].addMatches(byName[[2]string{e.Namespace, n}])
		}
	}
	return nil
}

// MaxCachedExpected bounds the expected jobs kept in memory (above it every request reads its filter's jobs).
const MaxCachedExpected = 200_000

// expectedCache keeps every active expected job under the inventory version it was read at.
type expectedCache struct {
	mu      sync.Mutex
	version string
	all     []ExpectedRow
	tooBig  bool // at version, there were more than MaxCachedExpected
}

// rows returns the active expected jobs: all of them from the cache while the version holds (or after reading
// them once), else only the filter's when there are too many to keep.
func (c *expectedCache) rows(ctx context.Context, r Reader, f Filter) ([]ExpectedRow, error) {
	v, err := r.InventoryVersion(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == v && (c.all != nil || c.tooBig) {
		if c.tooBig {
			return r.ExpectedJobs(ctx, f)
		}
		return c.all, nil
	}
	all, err := r.ExpectedJobs(ctx, Filter{})
	if err != nil {
		return nil, err
	}
	c.version, c.tooBig, c.all = v, len(all) > MaxCachedExpected, nil
	if c.tooBig {
		return r.ExpectedJobs(ctx, f)
	}
	c.all = all
	return all, nil
}

// withDbtMatches adds to each dbt expected job the dbt node jobs (ADR 0027) of its namespace it is reported
// as: by (unique_id, role) (DbtMatches), or by one of the names the node job recorded (MatchNames in names).
func (s *Service) withDbtMatches(ctx context.Context, rows []ExpectedRow) ([]ExpectedRow, error) {
	if !slices.ContainsFunc(rows, func(e ExpectedRow) bool { return e.DbtUniqueID != "" }) {
		return rows, nil
	}
	dbt, err := s.r.DbtJobs(ctx, commonNamespace(rows))
	if err != nil {
		return nil, err
	}
	byID, byName := map[string][]ReportedJob{}, map[string][]ReportedJob{}
	for _, j := range dbt {
		role := j.DbtRole
		if role == "" {
			role = "NODE"
		}
		k := j.Namespace + "\x1f" + j.DbtUniqueID + "|" + role
		byID[k] = append(byID[k], j)
		for _, n := range j.Names {
			byName[j.Namespace+"\x1f"+n] = append(byName[j.Namespace+"\x1f"+n], j)
		}
	}
	for i, e := range rows {
		for _, m := range e.DbtMatches {
			rows[i].addMatches(byID[e.Namespace+"\x1f"+m])
		}
		for _, n := range e.MatchNames {
			rows[i].addMatches(byName[e.Namespace+"\x1f"+n])
		}
	}
	return rows, nil
}

func (e *ExpectedRow) addMatches(js []ReportedJob) {
	for _, j := range js {
		if !slices.ContainsFunc(e.Matched, func(m ReportedJob) bool { return m.Key == j.Key }) {
			e.Matched = append(e.Matched, j)
		}
	}
}

// WithMatches adds to each row (read without matches) the reported jobs its source's rules match now: by match
// name, and dbt node jobs by unique_id and role (the rules of docs/trust.md). The lineage gaps' index applies it.
func (s *Service) WithMatches(ctx context.Context, rows []ExpectedRow) ([]ExpectedRow, error) {
	if err := s.withNameMatches(ctx, rows); err != nil {
		return nil, err
	}
	return s.withDbtMatches(ctx, rows)
}

// Visible keeps the expected jobs the caller may describe (visibleJobs), for the lineage gaps.
func (s *Service) Visible(ctx context.Context, caller authz.Principal, rows []ExpectedRow) ([]ExpectedRow, error) {
	return s.visibleJobs(ctx, caller, rows)
}

// StatusAt is an expected job's status at now by its matches (the coverage rule), for the lineage gaps.
func (s *Service) StatusAt(e ExpectedRow, now time.Time) JobStatus { return s.status(e, now) }

// JobMessage is the sentence people read about an expected job's status (the coverage item's message).
func (s *Service) JobMessage(st JobStatus) string { return s.jobItem(st, s.clock().UTC()).Message }

// QuietLimit is how long producer may send nothing before it counts as quiet, given its P95 gap (the
// quietProducers rule with its factor).
func (s *Service) QuietLimit(producer string, p95 time.Duration) time.Duration {
	factor := s.cfg.QuietFactor
	if v, ok := s.factors[producer]; ok {
		factor = v
	}
	return rules.QuietThreshold(p95, factor, s.cfg.QuietMin)
}

// JobRef names a job for a permission check: its key and its name.
type JobRef struct{ Key, Namespace, Name string }

// DescribableJobs says, per job, whether the caller may describe it (one batch of checks).
func (s *Service) DescribableJobs(ctx context.Context, caller authz.Principal, jobs []JobRef) ([]bool, error) {
	var b checks
	for _, j := range jobs {
		b.add(b.next(), authz.PrivDescribe, jobCand(j.Key, j.Namespace, j.Name))
	}
	return allowedIDs(ctx, s.perms, caller, &b)
}

// visibleJobs keeps the expected jobs the caller may describe, under their expected identity and under every
// reported job they matched: a hidden one is neither counted nor named.
func (s *Service) visibleJobs(ctx context.Context, caller authz.Principal, rows []ExpectedRow) ([]ExpectedRow, error) {
	var b checks
	for _, e := range rows {
		id := b.next()
		b.add(id, authz.PrivDescribe, jobCand("", e.Namespace, e.Name))
		for _, j := range e.Matched {
			b.add(id, authz.PrivDescribe, jobCand(j.Key, j.Namespace, j.Name))
		}
	}
	ok, err := allowedIDs(ctx, s.perms, caller, &b)
	if err != nil {
		return nil, err
	}
	out := rows[:0:0]
	for i, e := range rows {
		if ok[i] {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *Service) status(e ExpectedRow, now time.Time) JobStatus {
	var last int64
	for _, j := range e.Matched {
		last = max(last, j.LastSeenAt)
	}
	st := JobStatus{ExpectedRow: e, Last: fromMs(last)}
	st.Status = rules.StatusOf(time.Duration(e.IntervalMs)*time.Millisecond, e.Paused, len(e.Matched) > 0, st.Last, now,
		s.cfg.ReportGrace)
	return st
}

func (s *Service) jobItem(st JobStatus, now time.Time) Item {
	it := Item{Kind: ItemExpectedJob, Namespace: st.Namespace, Name: st.Name, Criticality: st.Criticality,
		Status: string(st.Status), Source: st.Source, Since: st.Last}
	for _, j := range st.Matched {
		it.JobKeys = append(it.JobKeys, j.Key)
	}
	what := st.Type + " " + st.Name
	switch st.Status {
	case rules.StatusNeverReported:
		it.Message = fmt.Sprintf("%s (source %s) has never reported: no job in namespace %s is named %s", what,
			st.Source, st.Namespace, st.matchText())
	case rules.StatusLate:
		it.Message = fmt.Sprintf("%s (source %s) last reported %s ago, expected every %s (%s)", what, st.Source,
			age(now.Sub(st.Last)), age(time.Duration(st.IntervalMs)*time.Millisecond), st.Schedule)
		if st.Last.IsZero() {
			it.Message = fmt.Sprintf("%s (source %s) has no reported event time, expected every %s (%s)", what,
				st.Source, age(time.Duration(st.IntervalMs)*time.Millisecond), st.Schedule)
		}
	default:
		it.Message = fmt.Sprintf("%s (source %s): %s", what, st.Source, strings.ToLower(string(st.Status)))
	}
	return it
}

// matchText names what the job could be reported under, for people.
func (e ExpectedRow) matchText() string {
	s := strings.Join(e.MatchNames, " or ")
	if len(e.DbtMatches) > 0 {
		s += ", nor is the dbt node job " + strings.Join(e.DbtMatches, " or ")
	}
	return s
}

// commonNamespace is the namespace all rows share, "" when they differ (DbtJobs then reads every namespace).
func commonNamespace(rows []ExpectedRow) string {
	for _, e := range rows[1:] {
		if e.Namespace != rows[0].Namespace {
			return ""
		}
	}
	return rows[0].Namespace
}
