package project

import (
	"fmt"
	"maps"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// The COLUMN_FEEDS digests of a held job come from the job fold state (docs/adr/0077-*.md, part 1).

// storedColumnDigests is what writeColumnEdges:read returns for job k's COLUMN_FEEDS into the given outputs.
func (s *scen) storedColumnDigests(k string, outs []string) map[string]any {
	rows := s.query(`UNWIND $outs AS out
		MATCH (:Dataset {key: out})-[:HAS_FIELD]->(b:Field)<-[c:COLUMN_FEEDS {jobKey: $k}]-(a:Field)
		RETURN $k + '|' + a.key + '>' + b.key AS id, c.`+projHashProp+` AS h`, map[string]any{"k": k, "outs": outs})
	out := map[string]any{}
	for _, r := range rows {
		out[r["id"].(string)] = r["h"]
	}
	return out
}

// heldColumnDigests fails unless job k is held with digests that equal what a read of its outputs returns now.
func heldColumnDigests(t *testing.T, s *scen, p *Projector, k string) {
	t.Helper()
	e := p.jobs.cache.Peek(k)
	if e == nil || e.Value.cols == nil {
		t.Fatalf("job %s is not held with its COLUMN_FEEDS digests", k)
	}
	if got := s.storedColumnDigests(k, e.Value.colOuts); !maps.Equal(got, e.Value.cols) || len(got) == 0 {
		t.Fatalf("held COLUMN_FEEDS digests %v, a read returns %v", e.Value.cols, got)
	}
}

// A held job with column lineage reads no COLUMN_FEEDS digest back, batch after batch, and the graph equals
// projecting every event at once.
func TestColumnDigestsHitReadsNoColumnEdgesBack(t *testing.T) {
	s := newScen(t)
	src := newSource(s, "coldig")
	p := s.newProjector()
	cols := map[string][]string{"x": {"in.a"}, "y": {"in.b"}}
	s.applyWith(p, src.append(s, colJobRun(s, "cs0", olevent.TypeStart, 0, "c0", cols)))
	s.applyWith(p, src.append(s, colJobRun(s, "cc0", olevent.TypeComplete, 60, "c0", cols)))
	before := statementCount(t, p, "writeColumnEdges:read")
	for i := 1; i <= 3; i++ {
		if i == 3 {
			cols = map[string][]string{"x": {"in.a"}} // y's edge closes: merged, still on the output
		}
		s.applyWith(p, src.append(s, colJobRun(s, fmt.Sprint("cs", i), olevent.TypeStart, i*600, fmt.Sprint("c", i), cols)))
		s.applyWith(p, src.append(s, colJobRun(s, fmt.Sprint("cc", i), olevent.TypeComplete, i*600+60, fmt.Sprint("c", i), cols)))
	}
	if d := statementCount(t, p, "writeColumnEdges:read") - before; d != 0 {
		t.Errorf("writeColumnEdges:read ran %v times in six batches of a column job held in memory, want 0", d)
	}
	if statementCount(t, p, "writeColumnEdges:merge") == 0 || s.columnEdgeCount() == 0 {
		t.Fatal("no COLUMN_FEEDS written")
	}
	heldColumnDigests(t, s, p, s.jobKey("cj"))
	live := s.dump()
	s.wipe()
	s.apply(src.log...)
	if got := s.dump(); got != live {
		t.Fatalf("held digests differ from projecting at once:\n%s", diffLines(got, live))
	}
}

// A dataset whose fields another batch refolds makes the held job read its digests again: a late schema that
// starts a field's history earlier (the Field is re-keyed, its edges deleted with it) on the input, then a late
// schema on the output. Each time the job reads back once, holds what a read returns, and the graph equals
// projecting every event at once.
func TestColumnDigestsChangedFieldsReadAgain(t *testing.T) {
	s := newScen(t)
	src := newSource(s, "coldigsig")
	p := s.newProjector()
	k := s.jobKey("cj")
	cols := map[string][]string{"x": {"in.a"}, "y": {"in.b"}}
	s.applyWith(p, src.append(s, s.dsEv("in0", 50, withSchema(s.ds("in"), "a", "b"))))
	s.applyWith(p, src.append(s, colJobRun(s, "cs0", olevent.TypeStart, 100, "c0", cols)))
	s.applyWith(p, src.append(s, colJobRun(s, "cc0", olevent.TypeComplete, 160, "c0", cols)))
	s.applyWith(p, src.append(s, colJobRun(s, "cs1", olevent.TypeStart, 600, "c1", cols)))
	heldColumnDigests(t, s, p, k)
	for i, late := range []olevent.Event{
		s.dsEv("inlate", 10, withSchema(s.ds("in"), "a", "b")),   // a and b start at 10: re-keyed
		s.dsEv("outlate", 20, withSchema(s.ds("out"), "x", "y")), // the output's fields start at 20
	} {
		reads := statementCount(t, p, "writeColumnEdges:read")
		s.applyWith(p, src.append(s, late))
		if statementCount(t, p, "writeColumnEdges:read") == reads {
			t.Fatalf("%s refolded the fields of a held column job's dataset and the job did not read its digests back",
				late.ID)
		}
		heldColumnDigests(t, s, p, k)
		reads = statementCount(t, p, "writeColumnEdges:read")
		s.applyWith(p, src.append(s,
			colJobRun(s, fmt.Sprint("cc", i+1), olevent.TypeComplete, (i+1)*600+60, fmt.Sprint("c", i+1), cols),
			colJobRun(s, fmt.Sprint("cs", i+2), olevent.TypeStart, (i+2)*600, fmt.Sprint("c", i+2), cols)))
		if d := statementCount(t, p, "writeColumnEdges:read") - reads; d != 0 {
			t.Errorf("after %s the held job read its digests %v times, want 0", late.ID, d)
		}
		heldColumnDigests(t, s, p, k)
	}
	live := s.dump()
	s.wipe()
	s.apply(src.log...)
	if got := s.dump(); got != live {
		t.Fatalf("refolded fields with held digests differ from projecting at once:\n%s", diffLines(got, live))
	}
}
