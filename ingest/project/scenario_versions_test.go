package project

import (
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestScenarioParentRootNominalAndJobVersions(t *testing.T) {
	s := newScen(t)
	sql := func(q string) evMod { return func(e *olevent.Event) { e.Job.SQL = q } }
	child := func(e *olevent.Event) {
		e.Run.Parent = &olevent.ParentRef{RunID: s.runID("dag"), JobNamespace: s.jobNS(), JobName: "dag"}
		e.Run.Root = &olevent.ParentRef{RunID: s.runID("root"), JobNamespace: s.jobNS(), JobName: "root"}
		start, end := s.at(0), s.at(3600)
		e.Run.NominalStart, e.Run.NominalEnd = &start, &end
	}
	s.apply(s.runEv("dag", olevent.TypeStart, 1, "dag", "dag", nil, nil),
		s.runEv("t1s", olevent.TypeStart, 10, "task", "t1", nil, []olevent.Dataset{s.ds("o")}, sql("select 1"), child),
		s.runEv("t1c", olevent.TypeComplete, 20, "task", "t1", nil, nil, sql("select 1")),
		s.runEv("t2c", olevent.TypeComplete, 40, "task", "t2", nil, []olevent.Dataset{s.ds("o")}, sql("select 2")),
		s.runEv("t3c", olevent.TypeComplete, 30, "task", "t3", nil, []olevent.Dataset{s.ds("o")}, sql("select 1")))
	r := s.run("t1")
	if r["parentRunId"] != s.runID("dag") || r["rootRunId"] != s.runID("root") || r["nominalStartTime"] != s.ms(0) ||
		r["nominalEndTime"] != s.ms(3600) {
		t.Fatalf("run %v", r)
	}
	s.one(`MATCH (:Run {key: $c})-[:CHILD_OF]->(p:Run {key: $p})-[:OF_JOB]->(:Job {key: $j}) RETURN p`,
		map[string]any{"c": s.runKey("task", "t1"), "p": s.runKey("dag", "dag"), "j": s.jobKey("dag")})
	vs := s.query(`MATCH (:Job {key: $j})-[:HAS_VERSION]->(v:JobVersion) RETURN v.sql AS sql, v.validFrom AS f, v.validTo AS t
		ORDER BY f`, map[string]any{"j": s.jobKey("task")})
	if len(vs) != 2 || vs[0]["sql"] != "select 1" || vs[0]["f"] != s.ms(10) || vs[0]["t"] != s.ms(40) ||
		vs[1]["sql"] != "select 2" || vs[1]["t"] != graph.OpenEnd {
		t.Fatalf("versions %v", vs)
	}
	ran := s.one(`MATCH (:Run {key: $r})-[:RAN_VERSION]->(v:JobVersion) RETURN v.sql AS sql`, map[string]any{"r": s.runKey("task", "t2")})
	if ran["sql"] != "select 2" {
		t.Fatalf("ran %v", ran)
	}
	e := s.edge("out", "task", s.dsKey("o"), graph.KindObserved)
	if e["lastRunId"] != s.runID("t2") || e["jobVersion"] != graph.JobVersionKey(s.jobKey("task"), (&jobRec{SQL: "select 2"}).defHash()) {
		t.Fatalf("latest evidence %v", e)
	}
}
