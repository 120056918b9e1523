package project

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// statements is how many times the projector ran the statement labelled fn.
func (s *scen) statements(fn string) uint64 {
	s.t.Helper()
	var m dto.Metric
	if err := s.p.stmts.WithLabelValues(fn).(prometheus.Histogram).Write(&m); err != nil {
		s.t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// rawEdge is an edge's stored properties (not read through its job).
func (s *scen) rawEdge(job, ds string) map[string]any {
	s.t.Helper()
	return s.one(`MATCH (:Dataset {key: $d})-[e:INPUT_TO {kind: 'OBSERVED'}]->(:Job {key: $j}) RETURN properties(e) AS p`,
		map[string]any{"d": s.dsKey(ds), "j": s.jobKey(job)})["p"].(map[string]any)
}

// Projection version 4 writes what changed (ADR 0035): a run that lists what the job's earlier runs listed changes
// no edge's intervals, so no INPUT_TO/OUTPUT_TO is written, and every edge reads the new run's evidence through the
// job. An edge whose latest listing is not the job's latest run (an input the last run dropped, closed by it) keeps
// its own evidence.
func TestScenarioARunThatChangesNoIntervalWritesNoEdge(t *testing.T) {
	s := newScen(t)
	run := func(name string, sec int, ins ...string) {
		var in []olevent.Dataset
		for _, d := range ins {
			in = append(in, s.ds(d))
		}
		s.apply(s.runEv(name+"s", olevent.TypeStart, sec, "etl", name, in, []olevent.Dataset{s.ds("out")}))
		s.apply(s.runEv(name+"c", olevent.TypeComplete, sec+5, "etl", name, in, []olevent.Dataset{s.ds("out")}))
	}
	run("r1", 10, "a", "c")
	written := s.statements("writeDatasetEdges:merge")
	run("r2", 20, "a", "c")
	if n := s.statements("writeDatasetEdges:merge") - written; n != 0 {
		t.Errorf("a run that changed no interval wrote edges %d times", n)
	}
	for _, d := range []string{"a", "c"} {
		if e := s.edge("in", "etl", s.dsKey(d), graph.KindObserved); e["lastRunId"] != s.runID("r2") ||
			e["lastObservedAt"] != s.ms(25) || e["lastRunState"] != olevent.TypeComplete {
			t.Errorf("input %s reads %v, want run r2's evidence", d, e)
		}
		if raw := s.rawEdge("etl", d); raw["lastRunId"] != nil || raw["eventIds"] != nil {
			t.Errorf("input %s stores evidence the job holds: %v", d, raw)
		}
	}
	run("r3", 30, "a") // drops c: its interval closes, its latest evidence stays r2's
	if e := s.edge("in", "etl", s.dsKey("c"), graph.KindObserved); e["lastRunId"] != s.runID("r2") ||
		e["lastObservedAt"] != s.ms(25) || s.intervals(e) != "[10,35)PUBLISHED" {
		t.Errorf("the dropped input reads %v %s, want r2's evidence, closed at 35", e, s.intervals(e))
	}
	if raw := s.rawEdge("etl", "c"); raw["lastRunId"] != s.runID("r2") {
		t.Errorf("the dropped input does not keep its own evidence: %v", raw)
	}
	if e := s.edge("in", "etl", s.dsKey("a"), graph.KindObserved); e["lastRunId"] != s.runID("r3") {
		t.Errorf("the kept input reads %v, want run r3's evidence", e)
	}
}
