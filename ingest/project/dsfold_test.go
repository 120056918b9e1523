package project

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// source is a stand-in for one Kafka partition: events get consecutive offsets, and can be read again from any
// offset (as the consumer does after a crash, from the projector's replay point).
type source struct {
	part string
	log  []olevent.Event
}

func newSource(s *scen, name string) *source { return &source{part: s.ns + "-" + name + "/0"} }

// append adds events at the next offsets and returns the envelopes to project.
func (src *source) append(s *scen, evs ...olevent.Event) []Envelope {
	out := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		out = append(out, src.envelope(s, int64(len(src.log)), e))
		src.log = append(src.log, e)
	}
	return out
}

func (src *source) envelope(s *scen, off int64, e olevent.Event) Envelope {
	return Envelope{Event: e, ReceivedAt: s.base.Add(time.Duration(off) * time.Millisecond), Principal: testPrincipal,
		Source: "gateway", Pos: foldstate.Pos{Part: src.part, Offset: off}}
}

// from is every event from offset off on, as a redelivery reads them.
func (src *source) from(s *scen, off int64) []Envelope {
	var out []Envelope
	for i := off; i < int64(len(src.log)); i++ {
		out = append(out, src.envelope(s, i, src.log[i]))
	}
	return out
}

func (s *scen) newProjector() *Projector {
	s.t.Helper()
	p, err := New(s.store, testCanon{}, s.bump, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *scen) applyWith(p *Projector, envs []Envelope) {
	s.t.Helper()
	if _, err := p.Apply(s.ctx, envs); err != nil {
		s.t.Fatalf("apply: %v", err)
	}
}

// shuffledBatches is a seeded shuffle of the events cut into batches of 1..4.
func shuffledBatches(evs []olevent.Event, seed uint64) [][]olevent.Event {
	rng := rand.New(rand.NewPCG(seed, 5))
	order := append([]olevent.Event(nil), evs...)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var out [][]olevent.Event
	for len(order) > 0 {
		n := min(1+rng.IntN(4), len(order))
		out = append(out, order[:n])
		order = order[n:]
	}
	return out
}

// The same shuffled stream, projected with the fold state kept in memory (saved write-behind) and with it saved
// and dropped before every batch (each batch loads every dataset's state from its snapshot), gives the graph of
// applying each event once in order.
func TestFoldStateCachedEqualsDroppedBeforeEveryBatch(t *testing.T) {
	s := newScen(t)
	evs := richHistory(s)
	s.apply(evs...)
	want := s.dump()
	for round, drop := range []bool{false, true, false, true} {
		s.wipe()
		p := s.newProjector()
		src := newSource(s, "diff"+string(rune('a'+round)))
		for _, b := range shuffledBatches(evs, uint64(round+1)) {
			if drop {
				if err := p.DropFoldState(s.ctx); err != nil {
					t.Fatal(err)
				}
			}
			s.applyWith(p, src.append(s, b...))
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d (drop before every batch: %t) differs:\n%s", round, drop, diffLines(want, got))
		}
		if n := testutil.ToFloat64(p.fold.saves.WithLabelValues("flush")); drop && n == 0 {
			t.Fatalf("round %d: dropping the state never saved a dirty one: the write-behind path was not taken", round)
		}
	}
}

// A projector that crashes (its memory lost) after its graph commits but before its write-behind snapshots are
// saved is replaced by one that reads the partition again from the replay point: the graph, the dataset states
// included, equals the graph of applying each event once.
func TestFoldStateCrashRecoversFromReplayPoint(t *testing.T) {
	s := newScen(t)
	evs := richHistory(s)
	s.apply(evs...)
	want := s.dump()
	s.wipe()
	src := newSource(s, "crash")
	batches := shuffledBatches(evs, 3)
	half := len(batches) / 2
	crashed := s.newProjector()
	for _, b := range batches[:half] {
		s.applyWith(crashed, src.append(s, b...))
	}
	if crashed.fold.cache.Len() == 0 || len(crashed.fold.cache.DirtyEntries()) == 0 {
		t.Fatal("no unsaved dataset state before the crash: the test would not test recovery")
	}
	off, ok, err := crashed.ReplayPoint(s.ctx, src.part[:len(src.part)-2], 0)
	if err != nil || !ok {
		t.Fatalf("replay point after unsaved changes: %d %t %v", off, ok, err)
	}
	// The crash: the first projector's memory is gone. The next reads the partition from the replay point (events
	// already projected among them), then the rest of the stream arrives.
	next := s.newProjector()
	for _, b := range batches[half:] {
		src.append(s, b...)
	}
	redelivered := src.from(s, off)
	for len(redelivered) > 0 {
		n := min(3, len(redelivered))
		s.applyWith(next, redelivered[:n])
		redelivered = redelivered[n:]
	}
	if got := s.dump(); got != want {
		t.Fatalf("recovery from the replay point differs:\n%s", diffLines(want, got))
	}
	// Saved now, a third projector loads states equal to the live ones: nothing was folded twice.
	if err := next.DropFoldState(s.ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := next.ReplayPoint(s.ctx, src.part[:len(src.part)-2], 0); ok {
		t.Fatal("a replay point remains after every state was saved")
	}
	s.applyWith(s.newProjector(), src.append(s, evs[len(evs)-1])) // a redelivery after the fact
	if got := s.dump(); got != want {
		t.Fatalf("after saving and reloading the recovered states:\n%s", diffLines(want, got))
	}
}

// Two projectors (a second instance, or a former owner of a partition) write the same datasets: each write is
// guarded by the node's version stamp, so the one holding a stale view is refused, reloads and retries, and the
// graph equals one projector applying every event.
func TestFoldStateStaleInstanceWriteIsRefusedAndRetried(t *testing.T) {
	s := newScen(t)
	evs := richHistory(s)
	s.apply(evs...)
	want := s.dump()
	s.wipe()
	a, b := s.newProjector(), s.newProjector()
	srcA, srcB := newSource(s, "fenceA"), newSource(s, "fenceB")
	for i, batch := range shuffledBatches(evs, 9) {
		if i%2 == 0 {
			s.applyWith(a, srcA.append(s, batch...))
		} else {
			s.applyWith(b, srcB.append(s, batch...))
		}
	}
	refused := testutil.ToFloat64(a.fold.conflicts) + testutil.ToFloat64(b.fold.conflicts)
	if refused == 0 {
		t.Fatal("no fenced write was refused: the two projectors never wrote over each other's view")
	}
	if got := s.dump(); got != want {
		t.Fatalf("two writers differ from one (%v refused writes):\n%s", refused, diffLines(want, got))
	}
	for _, p := range []*Projector{a, b} {
		if err := p.DropFoldState(s.ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.applyWith(s.newProjector(), srcA.append(s, evs[0]))
	if got := s.dump(); got != want {
		t.Fatalf("after both saved their states:\n%s", diffLines(want, got))
	}
}

// BenchmarkApplyBatchPositioned is BenchmarkApplyBatch with Kafka positions on the events, so the dataset states
// are saved write-behind (the consumer's path) instead of with every change.
func BenchmarkApplyBatchPositioned(b *testing.B) {
	t := &testing.T{}
	s := newScen(t)
	s.t = t
	src := newSource(s, "bench")
	const jobs, runsPerJob = 5, 5
	s.p.stepTimes = map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var batch []olevent.Event
		for j := range jobs {
			job := fmt.Sprintf("job%d", j)
			for r := range runsPerJob {
				run := fmt.Sprintf("%s-%d-%d", job, i, r)
				t0 := (i*runsPerJob+r)*100 + j
				out := withSchema(s.ds("out-"+job), "id", "v")
				batch = append(batch,
					s.runEv(run+"-s", olevent.TypeStart, t0, job, run, []olevent.Dataset{s.ds("hub")}, []olevent.Dataset{out}),
					s.runEv(run+"-c", olevent.TypeComplete, t0+50, job, run, nil, nil))
			}
		}
		if _, err := s.p.Apply(s.ctx, src.append(s, batch...)); err != nil {
			b.Fatal(err)
		}
	}
	for name, d := range s.p.stepTimes {
		b.ReportMetric(float64(d.Milliseconds())/float64(b.N), "ms/"+strings.ReplaceAll(name, " ", "_"))
	}
	b.ReportMetric(float64(b.N*jobs*runsPerJob*2)/b.Elapsed().Seconds(), "events/s")
}

// holderScenario is the stream of the two-holder tests: A's two writes of the hub at 10 s and 30 s, B's read of it
// at 20 s; it answers them and the dump of one projection of each, with the graph wiped again.
func holderScenario(s *scen) (e1, e2, e3 olevent.Event, want string) {
	hub := func() olevent.Dataset { return withSchema(s.ds("hub"), "id", "amount") }
	e1 = s.runEv("a1", olevent.TypeComplete, 10, "load", "ra1", nil, []olevent.Dataset{hub()})
	e2 = s.runEv("a2", olevent.TypeComplete, 30, "load", "ra2", nil, []olevent.Dataset{hub()})
	e3 = s.runEv("b1", olevent.TypeComplete, 20, "read", "rb1", []olevent.Dataset{hub()}, nil)
	s.apply(e1, e2, e3)
	want = s.dump()
	s.wipe()
	return e1, e2, e3, want
}

// Two instances hold one dataset across a handover: A folds two events of its partition into the dataset and
// holds them write-behind (unsaved); B, owning another partition, then loads the node's snapshot (behind A's
// stamp, so without A's observations) and writes its event through, deriving the dataset's properties
// (updatedAt, its fields) from a state that lacks A's. A's save at the end of its session is refused by B's
// stamp. A handover (both sessions end and save) leaves the graph of applying each event once: A's refused save
// reloads B's snapshot, re-applies its unsaved changes and writes the derived properties again.
func TestFoldStateRefusedSaveAtHandoverKeepsTheHoldersObservations(t *testing.T) {
	s := newScen(t)
	e1, e2, e3, want := holderScenario(s)
	a, b := s.newProjector(), s.newProjector()
	srcA, srcB := newSource(s, "handA"), newSource(s, "handB")
	s.applyWith(a, srcA.append(s, e1))
	s.applyWith(a, srcA.append(s, e2))
	if len(a.fold.cache.DirtyEntries()) == 0 {
		t.Fatal("A holds no unsaved dataset state: the test would not test a write-behind holder")
	}
	s.applyWith(b, srcB.append(s, e3))
	for _, h := range []struct {
		p   *Projector
		src *source
	}{{a, srcA}, {b, srcB}} {
		if err := h.p.SaveFoldState(s.ctx, []string{h.src.part}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.dump(); got != want {
		t.Fatalf("after the handover the graph differs from one projection of each event:\n%s", diffLines(want, got))
	}
	if n := len(a.fold.cache.DirtyEntries()); n != 0 {
		t.Fatalf("A still holds %d unsaved dataset states after its session's save", n)
	}
	for _, src := range []*source{srcA, srcB} {
		if off, ok, err := a.ReplayPoint(s.ctx, src.part[:len(src.part)-2], 0); err != nil || ok {
			t.Fatalf("%s: a replay point remains after both saved (%d, %v)", src.part, off, err)
		}
	}
}

// The same two holders without a session end: A, idle after its two events, saves what is due on the consumer's
// timer (SaveDue) once its state has been dirty for SnapshotEvery; the save is refused by B's write and the state
// refolded, so the live graph equals one projection of each event without either session ending.
func TestFoldStateIdleHolderSavesDueAndRefolds(t *testing.T) {
	s := newScen(t)
	e1, e2, e3, want := holderScenario(s)
	a, b := s.newProjector(), s.newProjector()
	srcA, srcB := newSource(s, "idleA"), newSource(s, "idleB")
	s.applyWith(a, srcA.append(s, e1, e2))
	s.applyWith(b, srcB.append(s, e3))
	if err := a.SaveDue(s.ctx); err != nil { // nothing due yet: A's changes stay unsaved
		t.Fatal(err)
	}
	if len(a.fold.cache.DirtyEntries()) == 0 {
		t.Fatal("A saved before its state was due: the test would not test a due save")
	}
	later := time.Now().Add(foldstate.SnapshotEvery + time.Second)
	a.fold.now = func() time.Time { return later }
	if err := a.SaveDue(s.ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.dump(); got != want {
		t.Fatalf("after A's due save the live graph differs from one projection of each event:\n%s", diffLines(want, got))
	}
	if n := len(a.fold.cache.DirtyEntries()); n != 0 {
		t.Fatalf("A still holds %d unsaved dataset states after its due save", n)
	}
}
