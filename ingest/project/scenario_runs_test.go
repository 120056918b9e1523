package project

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// runEvents is one run of job "load": START reads a, writes b; RUNNING; COMPLETE with b's schema and column
// lineage; OTHER adds a facet.
func runEvents(s *scen) []olevent.Event {
	a := withSchema(s.ds("a"), "id", "amount")
	b := withSchema(s.ds("b"), "id", "total")
	b.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{
		"total": {{Namespace: s.dsNS(), Name: "a", Field: "amount",
			Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "AGGREGATION"}}}},
	}}
	withSQL := func(e *olevent.Event) { e.Job.SQL = "insert into b select id, sum(amount) from a group by id" }
	return []olevent.Event{
		s.runEv("start", olevent.TypeStart, 10, "load", "r1", []olevent.Dataset{a}, []olevent.Dataset{s.ds("b")}, withSQL),
		s.runEv("running", olevent.TypeRunning, 20, "load", "r1", nil, nil),
		s.runEv("complete", olevent.TypeComplete, 30, "load", "r1", []olevent.Dataset{a}, []olevent.Dataset{b}, withSQL),
		s.runEv("other", olevent.TypeOther, 40, "load", "r1", nil, nil, func(e *olevent.Event) {
			e.Run.Facets["note"] = []byte(`{"x":1}`)
		}),
	}
}

func TestScenarioEveryOrderGivesTheSameGraph(t *testing.T) {
	s := newScen(t)
	evs := runEvents(s)
	s.apply(evs...)
	want := s.dump()
	for _, needle := range []string{`state="COMPLETE"`, `pubs=["PUBLISHED"]`, "COLUMN_FEEDS", "RAN_VERSION", "HAS_FIELD"} {
		if !strings.Contains(want, needle) {
			t.Fatalf("reference graph lacks %s:\n%s", needle, want)
		}
	}
	n := 0
	idx := make([]int, len(evs))
	for i := range idx {
		idx[i] = i
	}
	ordered.Permutations(idx, func(order []int) {
		n++
		s.wipe()
		ids := make([]string, len(order))
		for i, k := range order {
			s.apply(evs[k])
			ids[i] = evs[k].ID
		}
		if got := s.dump(); got != want {
			t.Fatalf("order %v gives a different graph:\n%s", ids, diffLines(want, got))
		}
	})
	if n != 24 {
		t.Fatalf("tried %d orders", n)
	}
}

func TestScenarioDuplicatesChangeNothing(t *testing.T) {
	s := newScen(t)
	evs := runEvents(s)
	s.apply(evs...)
	want := s.dump()
	bumpsBefore := len(s.bump.keys)
	res := s.apply(evs[2], evs[2], evs[2])
	if res.Projected != 0 || res.Duplicates != 3 || len(res.Touched) != 0 {
		t.Fatalf("result %+v", res)
	}
	for i := range 3 {
		if r := s.apply(evs[1]); r.Duplicates != 1 {
			t.Fatalf("delivery %d: %+v", i, r)
		}
	}
	if got := s.dump(); got != want {
		t.Fatalf("duplicates changed the graph:\n%s", diffLines(want, got))
	}
	if len(s.bump.keys) != bumpsBefore {
		t.Fatal("duplicates bumped generations")
	}
}

func TestScenarioRetryWithNewEmissionTime(t *testing.T) {
	s := newScen(t)
	evs := runEvents(s)
	s.apply(evs...)
	retry := evs[2]
	retry.ID, retry.EventTime = s.ns+"-complete-retry", s.at(35)
	s.apply(retry)
	r := s.run("r1")
	if r["state"] != olevent.TypeComplete || len(r["conflictingStates"].([]any)) != 0 || r["endedAt"] != s.ms(30) {
		t.Fatalf("run after retry: %v", r)
	}
	if got := s.intervals(s.edge("out", "load", s.dsKey("b"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("output edge %s", got)
	}
}

func TestScenarioLateStartAfterComplete(t *testing.T) {
	s := newScen(t)
	evs := runEvents(s)
	s.apply(evs[2])
	if r := s.run("r1"); r["state"] != olevent.TypeComplete || r["startedAt"] != nil {
		t.Fatalf("after complete: %v", r)
	}
	s.apply(evs[0])
	r := s.run("r1")
	if r["state"] != olevent.TypeComplete || r["startedAt"] != s.ms(10) || r["endedAt"] != s.ms(30) {
		t.Fatalf("late start reopened or lost: %v", r)
	}
	if got := s.intervals(s.edge("out", "load", s.dsKey("b"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("output edge %s", got)
	}
}

func TestScenarioFailWithPartialOutputIsAttempted(t *testing.T) {
	s := newScen(t)
	s.apply(
		s.runEv("s", olevent.TypeStart, 10, "load", "r1", []olevent.Dataset{s.ds("a")}, []olevent.Dataset{s.ds("b")}),
		s.runEv("f", olevent.TypeFail, 20, "load", "r1", nil, []olevent.Dataset{s.ds("c")}, func(e *olevent.Event) {
			e.Run.ErrorMessage = "disk full"
		}),
	)
	r := s.run("r1")
	if r["state"] != olevent.TypeFail || r["errorMessage"] != "disk full" {
		t.Fatalf("run %v", r)
	}
	for _, out := range []string{"b", "c"} {
		if got := s.intervals(s.edge("out", "load", s.dsKey(out), graph.KindObserved)); got != "[10,open)ATTEMPTED" &&
			got != "[20,open)ATTEMPTED" {
			t.Fatalf("output %s: %s", out, got)
		}
	}
	w := s.one(`MATCH (:Run {key: $r})-[w:WROTE]->(:Dataset {key: $d}) RETURN w.publication AS p`,
		map[string]any{"r": s.runKey("load", "r1"), "d": s.dsKey("c")})
	if w["p"] != graph.PubAttempted {
		t.Fatalf("wrote %v", w)
	}
	// a later COMPLETE run publishes; a FAIL after it never demotes.
	s.apply(s.runEv("c2", olevent.TypeComplete, 30, "load", "r2", nil, []olevent.Dataset{s.ds("b")}),
		s.runEv("f3", olevent.TypeFail, 40, "load", "r3", nil, []olevent.Dataset{s.ds("b")}))
	if got := s.intervals(s.edge("out", "load", s.dsKey("b"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("after complete and fail: %s", got)
	}
}

func TestScenarioAbortAndOtherAfterComplete(t *testing.T) {
	s := newScen(t)
	s.apply(s.runEv("s", olevent.TypeStart, 10, "load", "r1", nil, []olevent.Dataset{s.ds("b")}),
		s.runEv("a", olevent.TypeAbort, 20, "load", "r1", nil, nil))
	if r := s.run("r1"); r["state"] != olevent.TypeAbort || r["endedAt"] != s.ms(20) {
		t.Fatalf("abort: %v", r)
	}
	if got := s.intervals(s.edge("out", "load", s.dsKey("b"), graph.KindObserved)); got != "[10,open)ATTEMPTED" {
		t.Fatalf("aborted output: %s", got)
	}
	s.apply(s.runEv("c", olevent.TypeComplete, 30, "load", "r2", nil, []olevent.Dataset{s.ds("b")}),
		s.runEv("o", olevent.TypeOther, 40, "load", "r2", nil, nil, func(e *olevent.Event) {
			e.Run.Facets["extra"] = []byte(`{"k":"v"}`)
		}))
	r := s.run("r2")
	if r["state"] != olevent.TypeComplete || !strings.Contains(r["facets"].(string), `"extra"`) || r["endedAt"] != s.ms(30) {
		t.Fatalf("other after complete: %v", r)
	}
}

func TestScenarioStreamingJobIsPublishedWhileReporting(t *testing.T) {
	s := newScen(t)
	stream := func(e *olevent.Event) { e.Job.ProcessingType = "STREAMING" }
	s.apply(s.runEv("s", olevent.TypeStart, 10, "flink", "r1", []olevent.Dataset{s.ds("topic")},
		[]olevent.Dataset{s.ds("sink")}, stream),
		s.runEv("r", olevent.TypeRunning, 20, "flink", "r1", []olevent.Dataset{s.ds("topic")}, nil, stream))
	for dir, ds := range map[string]string{"in": "topic", "out": "sink"} {
		if got := s.intervals(s.edge(dir, "flink", s.dsKey(ds), graph.KindObserved)); got != "[10,open)PUBLISHED" {
			t.Fatalf("%s %s: %s", dir, ds, got)
		}
	}
	if r := s.run("r1"); r["processingType"] != "STREAMING" || r["state"] != olevent.TypeRunning {
		t.Fatalf("run %v", r)
	}
}

func TestScenarioLaterCompleteRunOmittingClosesInterval(t *testing.T) {
	s := newScen(t)
	in := []olevent.Dataset{s.ds("a"), s.ds("old")}
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "load", "r1", in, []olevent.Dataset{s.ds("b")}),
		s.runEv("c1", olevent.TypeComplete, 20, "load", "r1", nil, nil))
	// a failing run that omits "old" does not close; silence does not close.
	s.apply(s.runEv("f2", olevent.TypeFail, 40, "load", "r2", []olevent.Dataset{s.ds("a")}, nil))
	if got := s.intervals(s.edge("in", "load", s.dsKey("old"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("after fail: %s", got)
	}
	s.apply(s.runEv("s3", olevent.TypeStart, 50, "load", "r3", []olevent.Dataset{s.ds("a")}, []olevent.Dataset{s.ds("b")}),
		s.runEv("c3", olevent.TypeComplete, 60, "load", "r3", nil, nil))
	e := s.edge("in", "load", s.dsKey("old"), graph.KindObserved)
	if got := s.intervals(e); got != "[10,60)PUBLISHED" || e["validTo"] != s.ms(60) {
		t.Fatalf("closed interval: %s %v", got, e["validTo"])
	}
	if got := s.intervals(s.edge("in", "load", s.dsKey("a"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("kept input: %s", got)
	}
	// delivering the closing run before the first one gives the same edges.
	want := s.dump()
	s.wipe()
	s.apply(s.runEv("c3", olevent.TypeComplete, 60, "load", "r3", nil, nil),
		s.runEv("s3", olevent.TypeStart, 50, "load", "r3", []olevent.Dataset{s.ds("a")}, []olevent.Dataset{s.ds("b")}))
	s.apply(s.runEv("f2", olevent.TypeFail, 40, "load", "r2", []olevent.Dataset{s.ds("a")}, nil))
	s.apply(s.runEv("c1", olevent.TypeComplete, 20, "load", "r1", nil, nil),
		s.runEv("s1", olevent.TypeStart, 10, "load", "r1", in, []olevent.Dataset{s.ds("b")}))
	if got := s.dump(); got != want {
		t.Fatalf("reverse delivery differs:\n%s", diffLines(want, got))
	}
}

func TestScenarioConcurrentBatchesOnAHubDataset(t *testing.T) {
	s := newScen(t)
	const jobs, runsPerJob = 6, 4
	batches := make([][]olevent.Event, 2)
	var all []olevent.Event
	for j := range jobs {
		job := "job" + string(rune('a'+j))
		for r := range runsPerJob {
			run := job + "-run" + string(rune('0'+r))
			t0 := 100*r + j
			evs := []olevent.Event{
				s.runEv(run+"-s", olevent.TypeStart, t0, job, run, []olevent.Dataset{s.ds("hub")},
					[]olevent.Dataset{s.ds("out-" + job)}),
				s.runEv(run+"-c", olevent.TypeComplete, t0+50, job, run, []olevent.Dataset{s.ds("hub")}, nil),
			}
			all = append(all, evs...)
			// overlapping: both goroutines get every START; COMPLETEs alternate.
			batches[0] = append(batches[0], evs[0])
			batches[1] = append(batches[1], evs[0])
			batches[r%2] = append(batches[r%2], evs[1])
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range batches {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for start := 0; start < len(batches[i]); start += 8 {
				end := min(start+8, len(batches[i]))
				if _, err := s.applyErr(batches[i][start:end]...); err != nil {
					errs[i] = err
					return
				}
			}
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent apply: %v", err)
	}
	got := s.dump()
	s.wipe()
	s.apply(all...)
	if want := s.dump(); got != want {
		t.Fatalf("concurrent graph differs from sequential:\n%s", diffLines(want, got))
	}
	for j := range jobs {
		job := "job" + string(rune('a'+j))
		if got := s.intervals(s.edge("in", job, s.dsKey("hub"), graph.KindObserved)); got != fmt.Sprintf("[%d,open)PUBLISHED", j) {
			t.Fatalf("hub edge of %s: %s", job, got)
		}
	}
}

func TestScenarioBumpFailureIsReportedAfterCommit(t *testing.T) {
	s := newScen(t)
	s.bump.fail = errors.New("redis down")
	evs := runEvents(s)
	_, err := s.applyErr(evs[0])
	if !errors.Is(err, ErrGenerationBump) {
		t.Fatalf("want ErrGenerationBump, got %v", err)
	}
	s.bump.fail = nil
	if res := s.apply(evs[0]); res.Duplicates != 1 {
		t.Fatalf("the graph was not committed: %+v", res)
	}
}

func TestScenarioUnprojectableEventFailsDeterministically(t *testing.T) {
	s := newScen(t)
	bad := s.runEv("bad", olevent.TypeStart, 10, "", "r1", nil, nil)
	for i := range 2 {
		if _, err := s.applyErr(bad); !errors.Is(err, ErrUnprojectable) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
}
