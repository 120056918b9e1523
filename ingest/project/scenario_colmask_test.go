package project

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// maskOut is the output masked whose email comes from customers.email with the given transformation.
func (s *scen) maskOut(tt olevent.Transformation) olevent.Dataset {
	d := s.ds("masked")
	d.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{"email": {{Namespace: s.dsNS(),
		Name: "customers", Field: "email", Transformations: []olevent.Transformation{tt}}}}}
	return d
}

// Issue 19: a job that copies customers.email and later starts masking it keeps, on its one COLUMN_FEEDS, the
// kinds each stretch of runs reported from the event that listed them (ADR 0091: run m2 lists its masking at
// its COMPLETE, second 35), whatever order and batches the events arrive in.
func TestScenarioColumnEdgeKeepsAMaskingChange(t *testing.T) {
	s := newScen(t)
	identity := olevent.Transformation{Type: "DIRECT", Subtype: "IDENTITY"}
	masking := olevent.Transformation{Type: "DIRECT", Subtype: "TRANSFORMATION", Masking: true, Description: "sha256"}
	in := []olevent.Dataset{s.ds("customers")}
	var evs []olevent.Event
	for i, tt := range []olevent.Transformation{identity, masking, masking} {
		id := []string{"m1", "m2", "m3"}[i]
		at := 10 + 20*i
		evs = append(evs, s.runEv(id+"s", olevent.TypeStart, at, "mask_email", id, in, nil),
			s.runEv(id+"c", olevent.TypeComplete, at+5, "mask_email", id, in, []olevent.Dataset{s.maskOut(tt)}))
	}
	s.apply(evs...)
	row := s.one(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(:Field)<-[c:COLUMN_FEEDS]-(:Field)
		RETURN c.tHistory AS h, c.tSubtypes AS st`, map[string]any{"k": s.dsKey("masked")})
	h, _ := row["h"].(string)
	if !strings.Contains(h, `"ts":["IDENTITY"]`) || !strings.Contains(h, `"ts":["TRANSFORMATION"],"tm":[true],"td":["sha256"]`) ||
		strings.Index(h, "IDENTITY") > strings.Index(h, "TRANSFORMATION") {
		t.Fatalf("stored history %q, want IDENTITY then TRANSFORMATION with masking", h)
	}
	var decoded graph.Rel
	if err := json.Unmarshal([]byte(h), &decoded.THistory); err != nil {
		t.Fatal(err)
	}
	for at, want := range map[int]string{12: "IDENTITY", 34: "IDENTITY", 35: "TRANSFORMATION", 99: "TRANSFORMATION"} {
		ms := s.ms(at)
		if _, st, _, _ := decoded.TransformationsAt(ms); len(st) != 1 || st[0] != want {
			t.Errorf("at second %d: %v, want %s", at, st, want)
		}
	}
	want := s.dump()
	for round := range 6 {
		s.wipe()
		for _, batch := range shuffledBatches(evs, uint64(19+round)) {
			s.apply(batch...)
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d differs:\n%s", round, diffLines(want, got))
		}
	}
}
