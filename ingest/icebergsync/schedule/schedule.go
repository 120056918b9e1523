// Package schedule runs the Iceberg catalog syncs of `headwater serve` (ADR 0049): every catalog of the catalogs
// file on its own interval; one active syncer per catalog among all serve processes, by a lease in Neo4j that the
// holder renews and a standby takes over when it lapses; a failing catalog retried with back-off and shown in
// readiness (optional: the API stays ready) and metrics. A failed sync writes nothing (package icebergsync); a
// sync whose lease is lost mid-way is cancelled.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/internal/obs"
)

// Leases is the one-active-syncer lease store (Neo4jLeases).
type Leases interface {
	Acquire(ctx context.Context, catalog, holder string, ttl time.Duration) (Lease, error)
	Release(ctx context.Context, catalog, holder string) error
	Report(ctx context.Context, catalog, holder string, at time.Time, syncErr string) error
}

// SyncFunc syncs one catalog once under the lease h and says how many events it published and what it did not
// send; its batches must be fenced by h (ADR 0087).
type SyncFunc func(ctx context.Context, c Catalog, h Held) (Outcome, error)

// Outcome is what one sync published and the warnings of what it did not send (ADR 0075: table properties
// carrying tags the sync cannot read).
type Outcome struct {
	Events   int
	Warnings []icebergsync.Warning
}

// MaxErrorText bounds the error text kept on the lease and logged per failure.
const MaxErrorText = 300

// WarningRelogInterval is how often a warning that every sync of a catalog repeats is logged again: once when it
// first appears (or reappears after a sync without it), then at most once per interval, so a table that warns on
// every sync does not flood the log.
const WarningRelogInterval = time.Hour

// Scheduler runs the syncs of one process.
type Scheduler struct {
	file   File
	leases Leases
	sync   SyncFunc
	holder string
	m      *Metrics
	log    *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	state map[string]Lease // as last seen on the lease, per catalog

	warned map[string]map[icebergsync.Warning]time.Time // per catalog: the last sync's warnings, when each was last logged
}

// New builds a scheduler; holder names this process on the leases (unique per process: host, pid, start).
func New(f File, leases Leases, sync SyncFunc, holder string, m *Metrics, log *slog.Logger, now func() time.Time) *Scheduler {
	return &Scheduler{file: f, leases: leases, sync: sync, holder: holder, m: m, log: log, now: now, state: map[string]Lease{},
		warned: map[string]map[icebergsync.Warning]time.Time{}}
}

// Run runs every catalog's loop until ctx ends, then gives up the leases this process holds.
func (s *Scheduler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, c := range s.file.Catalogs {
		wg.Go(func() { s.loop(ctx, c) })
	}
	wg.Wait()
	return nil
}

// loop is one catalog's: every LeaseTTL/3 it takes or renews the lease (or sees who holds it); while it holds it,
// it syncs when due: at once on taking the lease, then every Interval, or after the back-off while failing.
func (s *Scheduler) loop(ctx context.Context, c Catalog) {
	renew := s.file.LeaseTTL / 3
	var due time.Time // zero: at once
	failures := 0
	defer s.release(c)
	var held time.Time // while leader: until when the lease it renews holds (a renewal must answer by then)
	for {
		lease, valid, err := s.acquire(ctx, c.Name, held)
		leader := err == nil && lease.Holder == s.holder && time.Now().Before(valid)
		held = time.Time{}
		if leader {
			held = valid
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("catalog sync lease unavailable", "catalog", c.Name, "err", err)
		}
		if err == nil {
			s.see(c.Name, lease)
		}
		s.m.leader.WithLabelValues(c.Name).Set(b2f(leader))
		if leader && !s.now().Before(due) {
			var serr error
			if held, serr = s.runOnce(ctx, c, valid, lease.Token); serr != nil {
				failures++
				due = s.now().Add(s.backoff(c, failures))
			} else {
				failures = 0
				due = s.now().Add(c.Interval)
			}
			s.m.failures.WithLabelValues(c.Name).Set(float64(failures))
		}
		if !leader {
			due, failures = time.Time{}, 0 // a process that takes the lease over syncs at once
		}
		wait := renew
		if leader {
			wait = min(renew, max(due.Sub(s.now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// HolderMarginDivisor: a holder stops acting on its lease TTL/HolderMarginDivisor before the lease could lapse,
// the time its cancelled sync needs to stop.
const HolderMarginDivisor = 10

// acquire takes or renews the catalog's lease and says until when this process may act on it by its own
// monotonic clock: the time the call was sent plus the TTL, less the margin. Neo4j's expiry is its timestamp() of the statement
// plus the TTL, which is never earlier, so the holder stops believing it holds the lease before a standby can take
// it over (ADR 0049, "self-fencing"). The call fails when it has not answered by held (the expiry of the lease
// being renewed; zero: the new lease's), so a renewal Neo4j is slow to answer does not outlive the lease.
func (s *Scheduler) acquire(ctx context.Context, catalog string, held time.Time) (Lease, time.Time, error) {
	sent := time.Now()
	valid := sent.Add(s.file.LeaseTTL - s.file.LeaseTTL/HolderMarginDivisor)
	if held.IsZero() {
		held = valid
	}
	actx, cancel := context.WithDeadline(ctx, held)
	defer cancel()
	l, err := s.leases.Acquire(actx, catalog, s.holder, s.file.LeaseTTL)
	return l, valid, err
}

// runOnce syncs c with the lease renewed beside it; losing the lease, or not renewing it before it would lapse
// (valid: until when the last renewal holds), cancels the sync and drops the leader gauge at once. It returns
// until when the last renewal holds (zero: lost). token is the lease's: a renewal that answers with another (the
// lease lapsed and was taken again) is a loss too.
func (s *Scheduler) runOnce(ctx context.Context, c Catalog, valid time.Time, token int64) (time.Time, error) {
	sctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	lost := make(chan struct{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.file.LeaseTTL / 3)
		defer t.Stop()
		lapse := time.NewTimer(time.Until(valid))
		defer lapse.Stop()
		loss := func() {
			valid = time.Time{}
			s.m.leader.WithLabelValues(c.Name).Set(0)
			close(lost)
			cancel()
		}
		for {
			select {
			case <-stop:
				return
			case <-lapse.C:
				loss()
				return
			case <-t.C:
				l, v, err := s.acquire(ctx, c.Name, valid)
				if err != nil || l.Holder != s.holder || l.Token != token {
					loss()
					return
				}
				valid = v
				lapse.Reset(time.Until(valid))
			}
		}
	})
	start := s.now()
	out, err := s.sync(sctx, c, Held{Catalog: c.Name, Holder: s.holder, Token: token, MinRemaining: s.file.LeaseTTL / HolderMarginDivisor})
	events := out.Events
	close(stop)
	wg.Wait()
	select {
	case <-lost:
		err = errors.Join(err, errors.New("the sync lease was lost during the sync (another process may hold it now)"))
	default:
	}
	s.m.seconds.WithLabelValues(c.Name).Observe(s.now().Sub(start).Seconds())
	s.m.events.WithLabelValues(c.Name).Add(float64(events))
	if err == nil {
		s.warn(c.Name, out.Warnings)
	}
	text := ""
	if err != nil {
		text = short(err.Error())
		s.m.syncs.WithLabelValues(c.Name, "failed").Inc()
		if errors.Is(err, ErrFenced) {
			s.m.fenced.WithLabelValues(c.Name).Inc()
		}
		s.log.Warn("catalog sync failed", "catalog", c.Name, "events", events, "err", text)
	} else {
		s.m.syncs.WithLabelValues(c.Name, "ok").Inc()
		s.log.Info("catalog synced", "catalog", c.Name, "events", events, "seconds", s.now().Sub(start).Seconds())
	}
	if ctx.Err() == nil {
		if rerr := s.leases.Report(ctx, c.Name, s.holder, s.now(), text); rerr != nil {
			s.log.Warn("catalog sync outcome not recorded on its lease", "catalog", c.Name, "err", rerr)
		}
		s.noteOutcome(c.Name, text)
	}
	return valid, err
}

// warn logs the warnings of a catalog's sync, one line each naming the table, the property and the rule: a
// warning the previous sync did not have at once, one every sync repeats at most once per WarningRelogInterval;
// and sets the catalog's warnings gauge (per rule) to this sync's count.
func (s *Scheduler) warn(catalog string, warns []icebergsync.Warning) {
	now := s.now()
	prev := s.warned[catalog]
	next := make(map[icebergsync.Warning]time.Time, len(warns))
	byRule := map[string]int{}
	for _, w := range warns {
		byRule[w.Rule]++
		if _, dup := next[w]; dup {
			continue
		}
		last, seen := prev[w]
		if !seen || now.Sub(last) >= WarningRelogInterval {
			s.log.Warn("catalog sync did not send a table property", "catalog", catalog, "table", w.Table,
				"property", w.Property, "rule", w.Rule, "detail", w.Detail, "repeated", seen)
			last = now
		}
		next[w] = last
	}
	s.warned[catalog] = next
	for _, rule := range []string{icebergsync.RuleColumnTagsPath, icebergsync.RuleTagKey, icebergsync.RuleMaxTablePropertyTags} {
		s.m.warnings.WithLabelValues(catalog, rule).Set(float64(byRule[rule]))
	}
}

// backoff is the wait before retrying a catalog after n consecutive failures.
func (s *Scheduler) backoff(c Catalog, n int) time.Duration {
	d := s.file.Backoff.Initial
	for i := 1; i < n && d < s.file.Backoff.Max; i++ {
		d *= 2
	}
	return min(d, s.file.Backoff.Max, c.Interval)
}

func (s *Scheduler) release(c Catalog) {
	s.m.leader.WithLabelValues(c.Name).Set(0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.leases.Release(ctx, c.Name, s.holder); err != nil {
		s.log.Warn("catalog sync lease not released (a standby takes it over when it expires)", "catalog", c.Name, "err", err)
	}
}

func (s *Scheduler) see(name string, l Lease) {
	s.mu.Lock()
	s.state[name] = l
	s.mu.Unlock()
	if !l.LastSuccess.IsZero() {
		s.m.lastSuccess.WithLabelValues(name).Set(float64(l.LastSuccess.Unix()))
	}
}

func (s *Scheduler) noteOutcome(name, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state[name]
	if errText == "" {
		l.LastSuccess, l.FailingSince, l.LastError = s.now(), time.Time{}, ""
	} else {
		if l.FailingSince.IsZero() {
			l.FailingSince = s.now()
		}
		l.LastError = errText
	}
	s.state[name] = l
}

// State is the catalog's state as this process last saw it on the lease.
func (s *Scheduler) State(name string) (Lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.state[name]
	return l, ok
}

// Checks are the optional readiness checks, one per catalog ("catalog:<name>"): failing while the catalog's
// syncs fail, whichever process runs them; a catalog never synced yet, or not yet seen, is not a failure.
func (s *Scheduler) Checks() []obs.Check {
	out := make([]obs.Check, 0, len(s.file.Catalogs))
	for _, c := range s.file.Catalogs {
		out = append(out, obs.Check{Name: "catalog:" + c.Name, Optional: true, Fn: func(context.Context) error {
			l, _ := s.State(c.Name)
			if l.FailingSince.IsZero() {
				return nil
			}
			return fmt.Errorf("failing since %s: %s", l.FailingSince.UTC().Format(time.RFC3339), l.LastError)
		}})
	}
	return out
}

func short(s string) string {
	if len(s) > MaxErrorText {
		return s[:MaxErrorText] + "..."
	}
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
