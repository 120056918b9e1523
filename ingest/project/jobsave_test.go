package project

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// saveStream is a job with 30 in-order runs 20 minutes apart and a late run (starting between runs 9 and 10)
// arriving after run 19; the partition is saved (as at a rebalance) before it, so the stored head is current and
// past the late run's start when it arrives.
func saveStream(s *scen) (first, rest []olevent.Event) {
	in, out := s.ds("src"), s.ds("dst")
	const step = 20 * 60
	run := func(i int) []olevent.Event {
		return []olevent.Event{runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*step, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*step+60, fmt.Sprint("r", i), in, out)}
	}
	for i := range 20 {
		first = append(first, run(i)...)
	}
	rest = append(rest, runEvAt(s, "late", olevent.TypeComplete, 9*step+300, "late", in, s.ds("dst2")))
	for i := 20; i < 30; i++ {
		rest = append(rest, run(i)...)
	}
	return first, rest
}

// frozen stops the projector's job clock: nothing falls due, every head stays written behind until a flush.
func frozen(p *Projector) *Projector {
	at := time.Now()
	p.jobs.now = func() time.Time { return at }
	return p
}

// A projector that commits batches with the job's head written behind and "crashes" (its memory dropped) before
// the deferred save, at each batch boundary after the rebalance save, is replaced by a new one over the same
// Neo4j that continues the partition from its replay point: the new one finds the stored head behind the job's
// stamp, rebuilds the state from the runs since it (and saves it with the change), and the graph equals applying
// each event once. It fails when the late run's fold (from a stored copy) writes its head behind too: the stored
// head past the late run's start then lacks it after the crash.
func TestJobStateCrashBeforeDeferredSaveResumesExactly(t *testing.T) {
	s := newScen(t)
	first, rest := saveStream(s)
	s.apply(append(append([]olevent.Event{}, first...), rest...)...)
	want := s.dump()
	batches := inOrderBatches(rest, 2)
	k := s.jobKey("job")
	for _, crashAt := range []int{2, 4, 6, 8, len(batches)} {
		s.wipe()
		s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": k})
		src := newSource(s, fmt.Sprint("jsave", crashAt))
		crashed := frozen(s.newProjector())
		for _, b := range inOrderBatches(first, 2) {
			s.applyWith(crashed, src.append(s, b...))
		}
		if err := crashed.SaveFoldState(s.ctx, []string{src.part}); err != nil { // a rebalance: saved and dropped
			t.Fatal(err)
		}
		for _, b := range batches[:crashAt] {
			s.applyWith(crashed, src.append(s, b...))
		}
		if crashAt < len(batches) && len(crashed.jobs.cache.DirtyEntries()) == 0 {
			t.Fatalf("crash after batch %d: nothing written behind: the test would not test the deferred save", crashAt)
		}
		off, ok, err := crashed.ReplayPoint(s.ctx, src.part[:len(src.part)-2], 0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			off = int64(len(src.log))
		}
		next := frozen(s.newProjector()) // the crash: the unsaved head is lost
		for _, b := range batches[crashAt:] {
			src.append(s, b...)
		}
		if crashAt == len(batches) { // nothing left to stream: one more run folds the job again
			src.append(s, runEvAt(s, "s30", olevent.TypeStart, 30*20*60, "r30", s.ds("src"), s.ds("dst")))
		}
		redelivered := src.from(s, off)
		for len(redelivered) > 0 {
			n := min(2, len(redelivered))
			s.applyWith(next, redelivered[:n])
			redelivered = redelivered[n:]
		}
		got := s.dump()
		ref := want
		if crashAt == len(batches) {
			s.wipe()
			s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": k})
			s.apply(src.log...)
			ref = s.dump()
		}
		if got != ref {
			t.Fatalf("crash after batch %d of the rest: the recovered graph differs:\n%s", crashAt, diffLines(ref, got))
		}
		if b := testutil.ToFloat64(next.jobs.behind); b == 0 {
			t.Fatalf("crash after batch %d: the new projector never found the stored job state behind its stamp", crashAt)
		}
		st := s.one(`MATCH (j:Job {key: $k}) RETURN j.projSeq AS seq, j.projSnap AS snap`, map[string]any{"k": k})
		if st["seq"] != st["snap"] && len(next.jobs.cache.DirtyEntries()) == 0 {
			t.Fatalf("crash after batch %d: the stored head is behind (%v < %v) with nothing held unsaved",
				crashAt, st["snap"], st["seq"])
		}
	}
}

// After a rebalance a second instance folds the job from the stored state, which is behind the job's stamp (the
// former owner held its head unsaved): it rebuilds it from the graph. The former owner, still holding its stale
// view, is refused on its next write of the job (and on its deferred save), reloads and retries; the graph
// equals one projector applying every event. Fails with the stamp check removed from writeFencedJobs.
func TestJobStateStaleSavedStateAfterRebalanceIsRebuilt(t *testing.T) {
	s := newScen(t)
	first, rest := saveStream(s)
	all := append(append([]olevent.Event{}, first...), rest...)
	s.apply(all...)
	want := s.dump()
	s.wipe()
	s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": s.jobKey("job")})
	a, b := frozen(s.newProjector()), frozen(s.newProjector())
	srcA, srcB := newSource(s, "jrebA"), newSource(s, "jrebB")
	for _, bt := range inOrderBatches(first, 2) {
		s.applyWith(a, srcA.append(s, bt...))
	}
	if len(a.jobs.cache.DirtyEntries()) == 0 {
		t.Fatal("the former owner holds nothing unsaved: the saved state would not be stale")
	}
	batches := inOrderBatches(rest, 2)
	for _, bt := range batches[:6] { // the new owner (the late run among them)
		s.applyWith(b, srcB.append(s, bt...))
	}
	if testutil.ToFloat64(b.jobs.behind) == 0 {
		t.Fatal("the new owner did not find the stored job state behind the job's stamp")
	}
	for _, bt := range batches[6:] { // the former owner, still holding its view, gets the rest
		s.applyWith(a, srcA.append(s, bt...))
	}
	if testutil.ToFloat64(a.jobs.conflicts) == 0 {
		t.Fatal("the former owner's stale job write was not refused")
	}
	for _, p := range []*Projector{b, a} {
		if err := p.DropFoldState(s.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.dump(); got != want {
		t.Fatalf("a stale saved state after a rebalance gives another graph:\n%s", diffLines(want, got))
	}
	s.applyWith(s.newProjector(), srcA.append(s, runEvAt(s, "s30", olevent.TypeStart, 30*20*60, "r30", s.ds("src"), s.ds("dst"))))
	got := s.dump()
	s.wipe()
	s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": s.jobKey("job")})
	s.apply(append(all, runEvAt(s, "s30", olevent.TypeStart, 30*20*60, "r30", s.ds("src"), s.ds("dst")))...)
	if want := s.dump(); got != want {
		t.Fatalf("a fold from the saved states after both flushed differs:\n%s", diffLines(want, got))
	}
}

// A job folded in every batch is saved with its change once written behind for jobSaveEvery (saveDueJobs skips
// the jobs a transaction folds), so its stored head stays at most that old while it stays busy.
func TestJobStateBusyJobIsSavedWithItsChangeWhenDue(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	p := frozen(s.newProjector())
	at := p.jobs.now()
	p.jobs.now = func() time.Time { return at }
	src := newSource(s, "jbusy")
	const batches = 12
	for i := range batches {
		s.applyWith(p, src.append(s, runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*600, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*600+60, fmt.Sprint("r", i), in, out)))
		at = at.Add(jobSaveEvery / 4)
	}
	if n := testutil.ToFloat64(p.jobs.saves.WithLabelValues("due")); n < 2 {
		t.Fatalf("a job folded in each of %d batches %v apart was saved when due %v times, want >= 2",
			batches, jobSaveEvery/4, n)
	}
	e := p.jobs.cache.Peek(s.jobKey("job"))
	if e == nil || (e.Dirty() && at.Sub(e.DirtySince()) > jobSaveEvery+jobSaveEvery/4) {
		t.Fatalf("the busy job's head has been written behind longer than jobSaveEvery: %+v", e)
	}
}
