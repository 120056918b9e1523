package schedule

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/icebergsync"
)

// memLeases is the lease rule in memory, for the scheduler's logic (the Neo4j store has its own test).
type memLeases struct {
	mu sync.Mutex
	l  map[string]Lease
}

func (m *memLeases) Acquire(_ context.Context, c, holder string, ttl time.Duration) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.l[c]
	if l.Holder == "" || l.Holder == holder || l.Until.Before(time.Now()) {
		l.Holder, l.Until = holder, time.Now().Add(ttl)
	}
	m.l[c] = l
	return l, nil
}

func (m *memLeases) Release(_ context.Context, c, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.l[c]; l.Holder == holder {
		l.Holder, l.Until = "", time.Time{}
		m.l[c] = l
	}
	return nil
}

func (m *memLeases) Report(_ context.Context, c, holder string, at time.Time, e string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.l[c]
	if l.Holder != holder {
		return nil
	}
	if e == "" {
		l.LastSuccess, l.FailingSince, l.LastError = at, time.Time{}, ""
	} else if l.FailingSince.IsZero() {
		l.FailingSince, l.LastError = at, e
	}
	m.l[c] = l
	return nil
}

type calls struct {
	mu sync.Mutex
	by map[string][]time.Time
}

func (c *calls) sync(holder string, err error) SyncFunc {
	return func(_ context.Context, cat Catalog, _ Held) (Outcome, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.by[holder] = append(c.by[holder], time.Now())
		return Outcome{Events: 1}, err
	}
}

func (c *calls) count(holder string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.by[holder])
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testFile(interval time.Duration) File {
	return File{LeaseTTL: 300 * time.Millisecond, Backoff: Backoff{Initial: 100 * time.Millisecond, Max: 400 * time.Millisecond},
		Catalogs: []Catalog{{Name: "lake", Interval: interval, Timeout: time.Second}}}
}

// One active syncer per catalog: of two processes, only the lease holder syncs; when it stops, the other takes
// the lease over and syncs at once.
func TestOneProcessSyncsACatalogAndAStandbyTakesOver(t *testing.T) {
	leases, c := &memLeases{l: map[string]Lease{}}, &calls{by: map[string][]time.Time{}}
	f := testFile(50 * time.Millisecond)
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB := t.Context()
	a := New(f, leases, c.sync("a", nil), "a", NewMetrics(nil), quiet(), time.Now)
	b := New(f, leases, c.sync("b", nil), "b", NewMetrics(nil), quiet(), time.Now)
	doneA := make(chan struct{})
	go func() { _ = a.Run(ctxA); close(doneA) }()
	time.Sleep(20 * time.Millisecond) // a takes the lease first
	go func() { _ = b.Run(ctxB) }()
	time.Sleep(400 * time.Millisecond)
	if c.count("a") < 3 || c.count("b") != 0 {
		t.Fatalf("while a holds the lease: a synced %d times, b %d; want a several, b never", c.count("a"), c.count("b"))
	}
	stopA()
	<-doneA // a released its lease
	before := time.Now()
	for c.count("b") == 0 && time.Since(before) < 2*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if c.count("b") == 0 {
		t.Fatal("b never took the catalog over after a stopped")
	}
	if wait := c.by["b"][0].Sub(before); wait > f.LeaseTTL {
		t.Errorf("b took %s to take over a released lease, want under one renewal period", wait)
	}
}

// A failing catalog is retried after Initial, doubling up to Max, and readiness says it is failing; a success
// clears it.
func TestAFailingCatalogBacksOffAndShowsInReadiness(t *testing.T) {
	leases, c := &memLeases{l: map[string]Lease{}}, &calls{by: map[string][]time.Time{}}
	s := New(testFile(time.Hour), leases, c.sync("a", errors.New("catalog answered 503")), "a", NewMetrics(nil), quiet(), time.Now)
	ctx, stop := context.WithTimeout(context.Background(), 1600*time.Millisecond)
	defer stop()
	_ = s.Run(ctx)
	got := c.by["a"]
	if len(got) < 5 {
		t.Fatalf("%d attempts in 1.6 s, want at least 5 (100+200+400+400 ms of back-off)", len(got))
	}
	for i, want := range []time.Duration{100, 200, 400, 400} {
		gap := got[i+1].Sub(got[i])
		if w := want * time.Millisecond; gap < w || gap > w+250*time.Millisecond { // slack for a loaded 2-core machine
			t.Errorf("gap %d: %s, want ~%s", i, gap, w)
		}
	}
	checks := s.Checks()
	if len(checks) != 1 || checks[0].Name != "catalog:lake" || !checks[0].Optional {
		t.Fatalf("checks %+v", checks)
	}
	if err := checks[0].Fn(context.Background()); err == nil {
		t.Error("readiness says a failing catalog is fine")
	}
	s.noteOutcome("lake", "")
	if err := checks[0].Fn(context.Background()); err != nil {
		t.Errorf("after a success readiness still says %v", err)
	}
}

func TestBackoffNeverExceedsTheInterval(t *testing.T) {
	s := New(File{Backoff: Backoff{Initial: 10 * time.Second, Max: 10 * time.Minute}}, nil, nil, "a", NewMetrics(nil), quiet(), time.Now)
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 4: 80 * time.Second, 10: 2 * time.Minute} {
		if got := s.backoff(Catalog{Interval: 2 * time.Minute}, n); got != want {
			t.Errorf("after %d failures: %s, want %s", n, got, want)
		}
	}
	if got := s.backoff(Catalog{Interval: time.Hour}, 30); got != 10*time.Minute {
		t.Errorf("after 30 failures: %s, want the 10m cap", got)
	}
}

// The tag warnings of a scheduled sync (ADR 0075) are logged one line each naming the table, the property and
// the rule: a new one at once, one every sync repeats once per WarningRelogInterval, one that went away and came
// back at once; the gauge counts the last sync's warnings per rule.
func TestScheduledSyncLogsTagWarningsWithoutFlooding(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(testFile(time.Minute), nil, nil, "a", NewMetrics(prometheus.NewRegistry()), log, func() time.Time { return now })
	path := icebergsync.Warning{Table: "sales.orders", Property: "headwater.column-tags.customer", Rule: icebergsync.RuleColumnTagsPath,
		Detail: `names column "customer", which the current schema does not have: not sent`}
	key := icebergsync.Warning{Table: "sales.orders", Property: "headwater.tags", Rule: icebergsync.RuleTagKey, Detail: `entry "=x" has no key: not sent`}
	lines := func() []string {
		defer buf.Reset()
		return strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' })
	}
	gauge := func(rule string) float64 { return testutil.ToFloat64(s.m.warnings.WithLabelValues("lake", rule)) }

	s.warn("lake", []icebergsync.Warning{path, key})
	got := lines()
	if len(got) != 2 || !strings.Contains(got[0], "table=sales.orders") || !strings.Contains(got[0], "property=headwater.column-tags.customer") ||
		!strings.Contains(got[0], "rule=column-tags-path") || !strings.Contains(got[1], "rule=tag-key") {
		t.Fatalf("first sync logged %q, want one line per warning naming table, property and rule", got)
	}
	if gauge(icebergsync.RuleColumnTagsPath) != 1 || gauge(icebergsync.RuleTagKey) != 1 {
		t.Errorf("gauge %v/%v, want 1 per rule", gauge(icebergsync.RuleColumnTagsPath), gauge(icebergsync.RuleTagKey))
	}
	for range 10 { // every sync for the next minutes repeats both: nothing logged
		now = now.Add(time.Minute)
		s.warn("lake", []icebergsync.Warning{path, key})
	}
	if got := lines(); len(got) != 0 {
		t.Errorf("repeated warnings logged again within %s: %q", WarningRelogInterval, got)
	}
	now = now.Add(WarningRelogInterval)
	s.warn("lake", []icebergsync.Warning{path}) // key fixed; path still there, due again
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], "rule=column-tags-path") || !strings.Contains(got[0], "repeated=true") {
		t.Errorf("after %s logged %q, want path's warning once more", WarningRelogInterval, got)
	}
	if gauge(icebergsync.RuleTagKey) != 0 || gauge(icebergsync.RuleColumnTagsPath) != 1 {
		t.Errorf("gauge after key was fixed: %v/%v, want 0 and 1", gauge(icebergsync.RuleTagKey), gauge(icebergsync.RuleColumnTagsPath))
	}
	now = now.Add(time.Minute)
	s.warn("lake", []icebergsync.Warning{path, key}) // key back: logged at once
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], "rule=tag-key") || !strings.Contains(got[0], "repeated=false") {
		t.Errorf("a warning that came back logged %q, want it at once", got)
	}
}

// stuckLeases answers holder's first Acquire and blocks every later one until its context ends (a renewal that
// Neo4j, under load, does not answer in time); until is when the answered lease expires.
type stuckLeases struct {
	memLeases
	calls int
	until time.Time
}

func (m *stuckLeases) Acquire(ctx context.Context, c, holder string, ttl time.Duration) (Lease, error) {
	m.mu.Lock()
	m.calls++
	first := m.calls == 1
	m.mu.Unlock()
	if !first {
		<-ctx.Done()
		return Lease{}, ctx.Err()
	}
	l, err := m.memLeases.Acquire(ctx, c, holder, ttl)
	m.until = l.Until
	return l, err
}

// A holder whose renewal does not come back stops syncing and stops calling itself the leader before its lease
// can lapse, so a standby that takes the lapsed lease over never syncs beside it (the e2e's "2 syncing
// processes" at load 25, ADR 0049).
func TestAHolderThatCannotRenewStopsBeforeItsLeaseLapses(t *testing.T) {
	leases := &stuckLeases{memLeases: memLeases{l: map[string]Lease{}}}
	f := testFile(time.Hour)
	var s *Scheduler
	type seen struct {
		at    time.Time
		gauge float64
	}
	stopped := make(chan seen, 1)
	sync := func(ctx context.Context, _ Catalog, _ Held) (Outcome, error) {
		<-ctx.Done()
		stopped <- seen{time.Now(), testutil.ToFloat64(s.m.leader.WithLabelValues("lake"))}
		return Outcome{}, ctx.Err()
	}
	s = New(f, leases, sync, "a", NewMetrics(prometheus.NewRegistry()), quiet(), time.Now)
	ctx, stop := context.WithTimeout(context.Background(), 4*f.LeaseTTL)
	defer stop()
	go func() { _ = s.Run(ctx) }()
	got := <-stopped
	if !got.at.Before(leases.until) {
		t.Errorf("the sync ran until %s, past the lease's expiry %s (a standby could sync beside it)", got.at.Format(time.StampMilli), leases.until.Format(time.StampMilli))
	}
	if got.gauge != 0 {
		t.Errorf("when its sync was stopped the process still said it was the leader (gauge %v)", got.gauge)
	}
}
