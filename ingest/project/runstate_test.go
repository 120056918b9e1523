package project

import (
	"testing"

	"github.com/headwater-data/headwater/ingest/fold"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// TestFoldRunOfRecords checks what the run fold is given of the projector's records (runEventOf): unresolved
// datasets and column inputs are skipped, a column-lineage facet of only unresolved inputs still records the
// output's column lineage (empty), the definition, the dbt job and the parent come through, and a DatasetEvent
// sets the publication of the run's output. The fold's own rules are fold.TestFoldRunPermutations.
func TestFoldRunOfRecords(t *testing.T) {
	ok := func(k string) *ident { return &ident{Key: k} }
	bad := &ident{Key: "x", Unresolved: "refused"}
	start := &rec{ID: "e1", Kind: string(olevent.KindRun), Type: olevent.TypeStart, Time: 10, Recv: 11, Producer: "p",
		Job: &jobRec{Key: "dbtjob", DbtRole: "model", SQL: "select 1"}, Parent: &parentRec{RunID: "pr", JobKey: "pj"},
		Inputs: []*dsRec{{ID: ok("a")}, {ID: bad}},
		Outputs: []*dsRec{{ID: ok("b"), Version: "v1", ColFields: map[string][]colInput{
			"o": {{DS: ok("a"), Field: "i"}, {DS: bad, Field: "j"}}}},
			{ID: ok("c"), ColDataset: []colInput{{DS: bad}}}, {ID: bad}}}
	done := &rec{ID: "e2", Kind: string(olevent.KindRun), Type: olevent.TypeComplete, Time: 20, Recv: 21, Producer: "p",
		Job: &jobRec{Key: "namejob"}}
	gate := &rec{ID: "e3", Kind: string(olevent.KindDataset), Time: 30, Recv: 31, Subject: &dsRec{ID: ok("b"), Publication: "WITHHELD"}}
	s := foldRun("run", []*rec{gate, done, start})
	if s.JobKey != "dbtjob" || s.Def == nil || s.Def.SQL != "select 1" || s.DefHash != start.Job.defHash() {
		t.Fatalf("job %q def %+v hash %q", s.JobKey, s.Def, s.DefHash)
	}
	if s.Parent == nil || *s.Parent != (fold.RunRef{RunID: "pr", JobKey: "pj"}) {
		t.Fatalf("parent %+v", s.Parent)
	}
	if len(s.Inputs) != 1 || s.Inputs["a"] == nil || len(s.Outputs) != 2 {
		t.Fatalf("inputs %v outputs %v", s.Inputs, s.Outputs)
	}
	if b := s.Outputs["b"]; b.Version != "v1" || b.Publication != "WITHHELD" || len(b.Col.Fields) != 1 {
		t.Fatalf("output b %+v cols %+v", b, b.Col)
	}
	if c := s.Outputs["c"]; c.Col == nil || len(c.Col.Dataset) != 0 || encodeCols(c.Col) != "{}" {
		t.Fatalf("output c cols %+v", c.Col)
	}
}
