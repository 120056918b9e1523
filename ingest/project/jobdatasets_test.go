package project

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// colJobRun is a run of job "cj" reading in and writing out with column lineage (output field <- "in.field").
func colJobRun(s *scen, id, typ string, sec int, run string, pairs map[string][]string) olevent.Event {
	return s.runEv(id, typ, sec, "cj", run, []olevent.Dataset{s.ds("in")}, []olevent.Dataset{s.colOut("out", pairs)})
}

// A batch whose job is held in memory takes its datasets' cuts, fieldsSig and field histories from the dataset
// fold state: no loadDatasetsOf statement runs, for a plain job and one with column lineage, and the graph equals
// projecting every event at once.
func TestJobFoldStateHitReadsNoDatasetBack(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	src := newSource(s, "nods")
	p := s.newProjector()
	cols := map[string][]string{"x": {"in.a"}}
	s.applyWith(p, src.append(s, runEvAt(s, "s0", olevent.TypeStart, 0, "r0", in, out),
		colJobRun(s, "cs0", olevent.TypeStart, 0, "c0", cols)))
	s.applyWith(p, src.append(s, runEvAt(s, "c0", olevent.TypeComplete, 60, "r0", in, out),
		colJobRun(s, "cc0", olevent.TypeComplete, 60, "c0", cols)))
	before := statementCount(t, p, "loadDatasetsOf")
	hits := testutil.ToFloat64(p.jobs.hits)
	for i := 1; i <= 3; i++ {
		s.applyWith(p, src.append(s,
			runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*600, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*600+60, fmt.Sprint("r", i), in, out),
			colJobRun(s, fmt.Sprint("cs", i), olevent.TypeStart, i*600, fmt.Sprint("c", i), cols),
			colJobRun(s, fmt.Sprint("cc", i), olevent.TypeComplete, i*600+60, fmt.Sprint("c", i), cols)))
	}
	if d := statementCount(t, p, "loadDatasetsOf") - before; d != 0 {
		t.Errorf("loadDatasetsOf ran %v times in three batches of jobs held in memory, want 0", d)
	}
	if d := testutil.ToFloat64(p.jobs.hits) - hits; d != 6 {
		t.Errorf("%v job fold-state hits in three batches of two jobs, want 6", d)
	}
	if s.columnEdgeCount() == 0 {
		t.Fatal("no COLUMN_FEEDS written: the column job's histories were not served")
	}
	live := s.dump()
	s.wipe()
	s.apply(src.log...)
	if got := s.dump(); got != live {
		t.Fatalf("held in memory differs from projected at once:\n%s", diffLines(got, live))
	}
}

// The field histories served to a held job are those the dataset step has just refolded: a schema that adds a
// field, a rename under a stable field id (whose names a later fold must not see changed) and a column listing of
// the new field, batch by batch, give the graph of projecting every event at once, without reading a dataset back.
func TestJobFoldStateHitServesRefoldedFields(t *testing.T) {
	s := newScen(t)
	src := newSource(s, "refold")
	p := s.newProjector()
	withIDs := func(d olevent.Dataset, fields ...[2]string) olevent.Dataset {
		for _, f := range fields {
			d.Schema = append(d.Schema, olevent.SchemaField{Path: f[0], Type: "string", FieldID: f[1]})
		}
		return d
	}
	batches := [][]olevent.Event{
		{s.dsEv("in0", 5, withIDs(s.ds("in"), [2]string{"a", "1"}))},
		{colJobRun(s, "cs0", olevent.TypeStart, 10, "c0", map[string][]string{"x": {"in.a"}})},
		{colJobRun(s, "cc0", olevent.TypeComplete, 20, "c0", map[string][]string{"x": {"in.a"}})},
		{s.dsEv("in1", 100, withIDs(s.ds("in"), [2]string{"a", "1"}, [2]string{"b", "2"}))}, // adds b
		{colJobRun(s, "cs1", olevent.TypeStart, 110, "c1", map[string][]string{"x": {"in.a"}, "y": {"in.b"}})},
		{colJobRun(s, "cc1", olevent.TypeComplete, 120, "c1", map[string][]string{"x": {"in.a"}, "y": {"in.b"}})},
		{s.dsEv("in2", 200, withIDs(s.ds("in"), [2]string{"aa", "1"}, [2]string{"b", "2"}))}, // a renamed aa
		{colJobRun(s, "cs2", olevent.TypeStart, 210, "c2", map[string][]string{"x": {"in.aa"}, "y": {"in.b"}})},
		{colJobRun(s, "cc2", olevent.TypeComplete, 220, "c2", map[string][]string{"x": {"in.aa"}, "y": {"in.b"}})},
		{s.dsEv("in3", 300, withIDs(s.ds("in"), [2]string{"aaa", "1"}, [2]string{"b", "2"}))}, // renamed again
		{colJobRun(s, "cs3", olevent.TypeStart, 310, "c3", map[string][]string{"x": {"in.aaa"}})},
		{colJobRun(s, "cc3", olevent.TypeComplete, 320, "c3", map[string][]string{"x": {"in.aaa"}})},
	}
	var before float64
	for i, b := range batches {
		if i == 2 {
			before = statementCount(t, p, "loadDatasetsOf")
		}
		s.applyWith(p, src.append(s, b...))
	}
	if d := statementCount(t, p, "loadDatasetsOf") - before; d != 0 {
		t.Errorf("loadDatasetsOf ran %v times once the job and its datasets were held, want 0", d)
	}
	if testutil.ToFloat64(p.jobs.hits) == 0 {
		t.Fatal("no job fold-state hit: the served path was not taken")
	}
	live := s.dump()
	s.wipe()
	s.apply(src.log...)
	if got := s.dump(); got != live {
		t.Fatalf("served histories differ from projecting at once:\n%s", diffLines(got, live))
	}
}

// A dataset another writer moved after this projector last wrote it (its stamp is not the one the dataset fold
// state holds) is never served stale: the held job's fenced write, whose fold took the dataset from memory, is
// refused, the dataset's entry is marked stale, and the retried batch reads both from Neo4j. Two ways: a second
// projector writes the dataset (a schema that changes no job's edges), and a writer that only moves the stamp.
func TestJobFoldStateHitServedDatasetMovedByAnotherWriter(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	outOnly := func(id, typ string, sec int, run string) olevent.Event {
		return s.runEv(id, typ, sec, "job", run, nil, []olevent.Dataset{out}) // names out only: src is not written
	}
	src, other := newSource(s, "movedA"), newSource(s, "movedB")
	p, q := s.newProjector(), s.newProjector()
	s.applyWith(p, src.append(s, runEvAt(s, "s0", olevent.TypeStart, 0, "r0", in, out)))
	s.applyWith(p, src.append(s, runEvAt(s, "c0", olevent.TypeComplete, 60, "r0", in, out)))
	s.applyWith(p, src.append(s, outOnly("s1", olevent.TypeStart, 600, "r1")))
	s.applyWith(q, other.append(s, s.dsEv("srcschema", 300, withSchema(s.ds("src"), "id", "v"))))
	conflicts, jobConflicts := testutil.ToFloat64(p.fold.conflicts), testutil.ToFloat64(p.jobs.conflicts)
	reads := statementCount(t, p, "loadDatasetsOf")
	s.applyWith(p, src.append(s, outOnly("c1", olevent.TypeComplete, 660, "r1")))
	if d := testutil.ToFloat64(p.jobs.conflicts) - jobConflicts; d != 1 {
		t.Fatalf("%v refused job writes after another writer moved a dataset the job's fold took from memory, want 1", d)
	}
	if testutil.ToFloat64(p.fold.conflicts)-conflicts != 1 || statementCount(t, p, "loadDatasetsOf") == reads {
		t.Fatal("the refused batch was not retried reading the datasets from Neo4j")
	}
	seq := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.projSeq AS seq`, map[string]any{"k": s.dsKey("src")})["seq"]
	if e := p.fold.cache.Peek(s.dsKey("src")); e != nil && !e.Value.stale && e.Seq != seq {
		t.Fatalf("the moved dataset's entry is held at stamp %d, the node's is %v: it was not reloaded", e.Seq, seq)
	}
	// A writer that moves the stamp alone (nothing this projector could tell from the node's properties).
	s.applyWith(p, src.append(s, outOnly("s2", olevent.TypeStart, 1200, "r2")))
	s.query(`MATCH (d:Dataset {key: $k}) SET d.projSeq = d.projSeq + 1`, map[string]any{"k": s.dsKey("dst")})
	jobConflicts = testutil.ToFloat64(p.jobs.conflicts)
	s.applyWith(p, src.append(s, runEvAt(s, "x2", olevent.TypeStart, 1210, "x2", s.ds("other"), s.ds("dst2")),
		s.runEv("c2", olevent.TypeComplete, 1260, "job", "r2", nil, nil)))
	if d := testutil.ToFloat64(p.jobs.conflicts) - jobConflicts; d != 1 {
		t.Fatalf("%v refused job writes after a dataset's stamp moved, want 1", d)
	}
	live := s.dump()
	s.wipe()
	s.apply(append(append([]olevent.Event(nil), src.log...), other.log...)...)
	if got := s.dump(); got != live {
		t.Fatalf("two writers with a moved dataset differ from projecting every event at once:\n%s", diffLines(got, live))
	}
}
