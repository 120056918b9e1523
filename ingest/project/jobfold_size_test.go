package project

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// genEvents are the load generator's first n events (its realistic mix: 2-4 RunEvents a run, column lineage on a
// quarter of the outputs, retries, FAIL/ABORT, late and duplicate deliveries, JobEvents and DatasetEvents) on a
// world of the given number of datasets at the design's runs per dataset, decoded and given ids as the gateway does.
func genEvents(t *testing.T, s *scen, datasets, n int) []olevent.Event {
	t.Helper()
	start := s.base
	c := gen.DefaultConfig(17, start)
	c.Prefix, c.Datasets, c.HubConsumers = s.ns, datasets, 50
	c.RunsPerDay = gen.DefaultRunsPerDay * datasets / gen.DefaultDatasets
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return start.Add(30 * 24 * time.Hour) })
	if err != nil {
		t.Fatal(err)
	}
	st := w.NewStream()
	out := make([]olevent.Event, 0, n)
	for len(out) < n {
		ev, err := dec.Decode(st.Next().Body)
		if err != nil {
			t.Fatalf("event %d: %v", len(out), err)
		}
		olevent.ResolveID("", &ev) // as the gateway does for an event without an id header
		out = append(out, ev)
	}
	return out
}

// jobCached.Size, which the job fold-state cache sums against its bound, is within a third of the heap the cached
// states keep: the job states the projector holds after projecting the load generator's realistic mix (measured as
// the heap freed when the cache lets them go, the datasets' states and the recent events released first).
func TestJobStateSizeEstimatesTheResidentHeap(t *testing.T) {
	s := newScen(t)
	evs := genEvents(t, s, 3000, 6000)
	p := s.newProjector()
	src := newSource(s, "gen")
	for i := 0; i < len(evs); i += 100 {
		s.applyWith(p, src.append(s, evs[i:min(i+100, len(evs))]...))
	}
	var runs, subjects, cols, withCols, ckBytes int
	dirty := p.jobs.cache.DirtyEntries() // the shape of the held states, on those written behind
	for _, e := range dirty {
		v := e.Value
		runs += len(v.runs)
		subjects += len(v.ck.Subjects)
		cols += len(v.ck.Cols)
		if len(v.ck.Cols) > 0 {
			withCols++
		}
		b, err := encodeCheckpoint(v.ck)
		if err != nil {
			t.Fatal(err)
		}
		ckBytes += len(b)
	}
	if err := p.saveAll(s.ctx); err != nil {
		t.Fatal(err)
	}
	if d := p.jobs.cache.DirtyEntries(); len(d) > 0 {
		t.Fatalf("%d jobs still dirty after saveAll", len(d))
	}
	nd := len(dirty)
	dirty = nil
	evs, src = nil, nil
	p.fold.cache.Clear()
	p.recent = newRecentEvents(RecentEventsMaxBytes)
	n, counted := p.jobs.cache.Len(), p.jobs.cache.Bytes()
	if n < 100 {
		t.Fatalf("only %d jobs held: the stream does not exercise the cache", n)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p.jobs.cache.Clear()
	runtime.GC()
	runtime.ReadMemStats(&after)

	runtime.KeepAlive(p)
	freed := float64(int64(before.HeapAlloc) - int64(after.HeapAlloc))
	per, perFreed := float64(counted)/float64(n), freed/float64(n)
	t.Logf("%d jobs held (of the generator's 3,000-dataset world, 6,000 events): counted %.0f B a job (Size + %d B "+
		"overhead), freed %.0f B a job (%.2fx); per job %.1f runs since the head, %.1f subjects, %.1f column "+
		"aggregates (%d of %d with column lineage), stored head %.0f B compressed (over the %d written behind)",
		n, per, foldstate.EntryOverhead, perFreed, per/perFreed, float64(runs)/float64(nd),
		float64(subjects)/float64(nd), float64(cols)/float64(nd), withCols, nd, float64(ckBytes)/float64(nd), nd)
	if r := per / perFreed; r < 0.67 || r > 1.5 {
		t.Errorf("Size counts %.0f B a job, the heap keeps %.0f B: not within a third", per, perFreed)
	}
}

// A job fold state bounded by fewer bytes than its jobs' states hold evicts by bytes: over a periodic stream of
// many jobs it holds fewer than all of them and never more than its bound once the due entries are saved, the
// jobs beyond it are saved as due, and the graph is the one the default bound (which holds every job) projects.
func TestJobStateCacheEvictsByBytes(t *testing.T) {
	const jobs, rounds = 40, 3
	s := newScen(t)
	var batches [][]olevent.Event
	for r := range rounds {
		for half := range 2 {
			var b []olevent.Event
			for j := half; j < jobs; j += 2 {
				run, job := fmt.Sprint("r", j, "-", r), fmt.Sprint("pj", j)
				sec := (r*2+half)*60 + j
				in, out := s.ds(fmt.Sprint("pin", j)), withSchema(s.ds(fmt.Sprint("pout", j)), "id", "v")
				b = append(b, s.runEv("s"+run, olevent.TypeStart, sec, job, run, []olevent.Dataset{in}, []olevent.Dataset{out}),
					s.runEv("c"+run, olevent.TypeComplete, sec+30, job, run, nil, nil))
			}
			batches = append(batches, b)
		}
	}
	project := func(p *Projector, name string) {
		at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
		p.jobs.now = func() time.Time { return at }
		src := newSource(s, name)
		for _, b := range batches {
			s.applyWith(p, src.append(s, b...))
			at = at.Add(time.Minute)
		}
	}
	full := s.newProjector()
	project(full, "full")
	if n := full.jobs.cache.Len(); n != jobs {
		t.Fatalf("the default bound holds %d of %d jobs", n, jobs)
	}
	if n := testutil.ToFloat64(full.jobs.saves.WithLabelValues("due")); n != 0 {
		t.Fatalf("the default bound saved %v jobs as due within jobSaveEvery", n)
	}
	per := full.jobs.cache.Bytes() / jobs
	want := s.dump()
	s.wipe()

	p := s.newProjector()
	bound := per * jobs / 4
	p.SetMemoryBounds(MemoryBounds{JobStateBytes: bound})
	project(p, "bytes")
	if err := p.SaveDue(s.ctx); err != nil {
		t.Fatal(err)
	}
	n, held := p.jobs.cache.Len(), p.jobs.cache.Bytes()
	t.Logf("bound %d B (%d B a job): holds %d jobs, %d B; due saves %v", bound, per, n, held,
		testutil.ToFloat64(p.jobs.saves.WithLabelValues("due")))
	if n >= jobs || n == 0 {
		t.Fatalf("a bound of a quarter of the jobs' bytes holds %d of %d jobs", n, jobs)
	}
	if testutil.ToFloat64(p.jobs.saves.WithLabelValues("due")) == 0 {
		t.Fatal("no job fell due beyond the bound")
	}
	if got := s.dump(); got != want {
		t.Fatalf("a job cache bounded by bytes projects another graph:\n%s", diffLines(want, got))
	}
}
