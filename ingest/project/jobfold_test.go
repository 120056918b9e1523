package project

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// jobHistory is richHistory plus a job with a long in-order history (a run every 20 minutes for 10 hours, so its
// checkpoint advances past stored copies) and a late run of it.
func jobHistory(s *scen) []olevent.Event {
	evs := richHistory(s)
	in, out := s.ds("src"), s.ds("dst")
	const step = 20 * 60
	for i := range 30 {
		evs = append(evs,
			s.runEv(fmt.Sprint("ls", i), olevent.TypeStart, 1000+i*step, "daily", fmt.Sprint("lr", i), []olevent.Dataset{in}, []olevent.Dataset{out}),
			s.runEv(fmt.Sprint("lc", i), olevent.TypeComplete, 1000+i*step+60, "daily", fmt.Sprint("lr", i), nil, nil))
	}
	return append(evs, s.runEv("late", olevent.TypeComplete, 1000+25*step+300, "daily", "late",
		[]olevent.Dataset{in}, []olevent.Dataset{s.ds("dst2")}))
}

// inOrderBatches cuts the events, in order, into batches of n.
func inOrderBatches(evs []olevent.Event, n int) [][]olevent.Event {
	var out [][]olevent.Event
	for len(evs) > 0 {
		k := min(n, len(evs))
		out = append(out, evs[:k])
		evs = evs[k:]
	}
	return out
}

// The same streams (shuffled, and in order, which keeps the job fold on its head checkpoint), projected with the
// job fold state kept in memory (checkpoints written behind, runs and edge digests not read back) and with it
// saved and dropped before every batch (each batch locks and loads every job from Neo4j, as before), give the
// graph of applying each event once in order.
func TestJobFoldStateCachedEqualsDroppedBeforeEveryBatch(t *testing.T) {
	s := newScen(t)
	evs := jobHistory(s)
	s.apply(evs...)
	want := s.dump()
	for round, drop := range []bool{false, true, false, true, false} {
		s.wipe()
		p := s.newProjector()
		src := newSource(s, "jdiff"+string(rune('a'+round)))
		batches := shuffledBatches(evs, uint64(round+11))
		if round == 4 {
			batches = inOrderBatches(evs, 3)
		}
		for _, b := range batches {
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
		hits := testutil.ToFloat64(p.jobs.hits)
		switch {
		case drop && hits != 0:
			t.Fatalf("round %d: %v job fold-state hits with the state dropped before every batch", round, hits)
		case !drop && hits == 0:
			t.Fatalf("round %d: no job fold-state hit: the in-memory path was not taken", round)
		case drop && testutil.ToFloat64(p.jobs.saves.WithLabelValues("flush")) == 0:
			t.Fatalf("round %d: dropping the state never saved a checkpoint written behind", round)
		}
	}
}

// A batch whose jobs are held in memory reads neither the job's checkpoint, nor its runs, nor its edges' digests,
// and writes the job's checkpoint behind.
func TestJobFoldStateHitReadsNothingBack(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	src := newSource(s, "hit")
	p := s.newProjector()
	s.applyWith(p, src.append(s, runEvAt(s, "s0", olevent.TypeStart, 0, "r0", in, out)))
	s.applyWith(p, src.append(s, runEvAt(s, "c0", olevent.TypeComplete, 60, "r0", in, out)))
	before := map[string]float64{}
	names := []string{"lockJobs", "loadJobRuns", "loadJobDecls", "writeDatasetEdges:read"}
	for _, n := range names {
		before[n] = statementCount(t, p, n)
	}
	through := testutil.ToFloat64(p.jobs.saves.WithLabelValues("through"))
	for i := 1; i <= 3; i++ {
		s.applyWith(p, src.append(s, runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*600, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*600+60, fmt.Sprint("r", i), in, out)))
	}
	for _, n := range names {
		if d := statementCount(t, p, n) - before[n]; d != 0 {
			t.Errorf("%s ran %v times in three batches of a job held in memory, want 0", n, d)
		}
	}
	if d := testutil.ToFloat64(p.jobs.saves.WithLabelValues("through")) - through; d != 0 {
		t.Errorf("the checkpoint was written with the change %v times in three in-order batches, want behind", d)
	}
	if len(p.jobs.cache.DirtyEntries()) == 0 {
		t.Fatal("no job checkpoint left unsaved: nothing was written behind")
	}
	live := s.dump()
	if err := p.DropFoldState(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.wipe()
	s.apply(src.log...)
	if got := s.dump(); got != live {
		t.Fatalf("held in memory differs from projected at once:\n%s", diffLines(got, live))
	}
}

func statementCount(t *testing.T, p *Projector, fn string) float64 {
	t.Helper()
	var m dto.Metric
	if err := p.stmts.WithLabelValues(fn).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return float64(m.GetHistogram().GetSampleCount())
}

// A projector that crashes (its memory lost) with job checkpoints written behind is replaced by one that reads
// the partition again from the replay point: it folds those jobs from the older stored checkpoints and the runs,
// and the graph equals the graph of applying each event once.
func TestJobFoldStateCrashRecoversFromSavedState(t *testing.T) {
	s := newScen(t)
	evs := jobHistory(s)
	s.apply(evs...)
	want := s.dump()
	s.wipe()
	src := newSource(s, "jcrash")
	batches := inOrderBatches(evs, 4)
	half := len(batches) * 2 / 3
	crashed := s.newProjector()
	for _, b := range batches[:half] {
		s.applyWith(crashed, src.append(s, b...))
	}
	if len(crashed.jobs.cache.DirtyEntries()) == 0 {
		t.Fatal("no job checkpoint written behind before the crash: the test would not test recovery")
	}
	off, ok, err := crashed.ReplayPoint(s.ctx, src.part[:len(src.part)-2], 0)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		off = int64(len(src.log))
	}
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
		t.Fatalf("recovery from the saved state differs:\n%s", diffLines(want, got))
	}
	if err := next.DropFoldState(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.applyWith(s.newProjector(), src.append(s, evs[len(evs)-1])) // a redelivery after the fact
	if got := s.dump(); got != want {
		t.Fatalf("after saving and reloading the recovered states:\n%s", diffLines(want, got))
	}
}

// Two projectors (a second instance, or a former owner of a partition) fold the same jobs: each job write is
// guarded by the job's version stamp, so the one holding a stale view (runs another wrote since) is refused,
// drops it, reloads and retries, and the graph equals one projector applying every event.
func TestJobFoldStateStaleInstanceWriteIsRefusedAndRetried(t *testing.T) {
	s := newScen(t)
	evs := jobHistory(s)
	s.apply(evs...)
	want := s.dump()
	for round, batches := range [][][]olevent.Event{inOrderBatches(evs, 3), shuffledBatches(evs, 19)} {
		s.wipe()
		a, b := s.newProjector(), s.newProjector()
		srcA, srcB := newSource(s, fmt.Sprint("jfenceA", round)), newSource(s, fmt.Sprint("jfenceB", round))
		for i, batch := range batches {
			if i%2 == 0 {
				s.applyWith(a, srcA.append(s, batch...))
			} else {
				s.applyWith(b, srcB.append(s, batch...))
			}
		}
		refused := testutil.ToFloat64(a.jobs.conflicts) + testutil.ToFloat64(b.jobs.conflicts)
		if refused == 0 {
			t.Fatalf("round %d: no fenced job write was refused: the two projectors never wrote over each other's view", round)
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d: two writers differ from one (%v refused job writes):\n%s", round, refused, diffLines(want, got))
		}
		for _, p := range []*Projector{a, b} {
			if err := p.DropFoldState(s.ctx); err != nil {
				t.Fatal(err)
			}
		}
		s.applyWith(s.newProjector(), srcA.append(s, evs[0]))
		if got := s.dump(); got != want {
			t.Fatalf("round %d: after both saved their states:\n%s", round, diffLines(want, got))
		}
	}
}

// A late run that a projector folds from an older written-behind head checkpoint (after a crash) drops the stored
// checkpoint copies after its start, though they are newer than that head: a later, later run folds from a copy
// that holds it, and the graph equals applying every event at once.
func TestJobFoldStateLateRunAfterACrashDropsStaleCopies(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	const step = 20 * 60
	var all []olevent.Event
	for i := range 30 {
		all = append(all, runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*step, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*step+60, fmt.Sprint("r", i), in, out))
	}
	lateA := runEvAt(s, "lateA", olevent.TypeComplete, 9*step+300, "lateA", in, s.ds("dst2"))
	lateB := runEvAt(s, "lateB", olevent.TypeComplete, 14*step+300, "lateB", in, s.ds("dst3"))
	src := newSource(s, "copies")
	crashed := s.newProjector()
	frozen := time.Now()
	crashed.jobs.now = func() time.Time { return frozen } // nothing falls due: the head stays written behind
	for _, b := range inOrderBatches(all, 2) {
		s.applyWith(crashed, src.append(s, b...))
	}
	if len(crashed.jobs.cache.DirtyEntries()) == 0 {
		t.Fatal("no head checkpoint written behind: the test would not test the stale copies")
	}
	next := s.newProjector() // the crash: the newer head is lost, the copies stored with the changes remain
	s.applyWith(next, src.append(s, lateA))
	if err := next.DropFoldState(s.ctx); err != nil { // the head saved: the next late run folds from a copy
		t.Fatal(err)
	}
	s.applyWith(next, src.append(s, lateB))
	got := s.dump()
	s.wipe()
	s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": s.jobKey("job")})
	s.apply(append(all, lateA, lateB)...)
	if want := s.dump(); got != want {
		t.Fatalf("late runs after a crash give another graph:\n%s", diffLines(want, got))
	}
}
