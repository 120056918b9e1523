package project

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// A hub read by more runs than a dataset's state holds gets its oldest observations sealed into DatasetLogChunk
// nodes; a late event whose schema falls among the sealed ones restores them. The graph must be exactly the graph
// of applying every event at once, and the hub's state must stay bounded.
func TestScenarioSealedDatasetLogWithALateSchema(t *testing.T) {
	s := newScen(t)
	const reads = dsLogHotMax + 200
	schemaAt := func(sec int) olevent.Dataset {
		switch {
		case sec >= 300 && sec < 450:
			return withSchema(s.ds("hub"), "id", "b", "x")
		default:
			return withSchema(s.ds("hub"), "id", "b")
		}
	}
	var inOrder []olevent.Event
	for i := 1; i <= reads; i++ {
		inOrder = append(inOrder, s.runEv(fmt.Sprint("s", i), olevent.TypeStart, i, fmt.Sprint("reader", i%7),
			fmt.Sprint("r", i), []olevent.Dataset{schemaAt(i)}, nil))
	}
	late := s.runEv("late", olevent.TypeComplete, 250, "writer", "w1", nil,
		[]olevent.Dataset{withSchema(s.ds("hub"), "id")}) // b dropped at 250, back at 251

	restoresBefore := testutil.ToFloat64(s.p.restores)
	for i := 0; i < len(inOrder); i += 50 {
		s.apply(inOrder[i:min(i+50, len(inOrder))]...)
	}
	chunks := s.one(`MATCH (c:DatasetLogChunk {datasetKey: $k}) RETURN count(c) AS n, max(c.seq) AS seq`,
		map[string]any{"k": s.dsKey("hub")})
	if chunks["n"].(int64) == 0 {
		t.Fatalf("no chunk sealed after %d observations", reads)
	}
	s.apply(late)
	if got := testutil.ToFloat64(s.p.restores) - restoresBefore; got != 1 {
		t.Fatalf("the late schema restored %v datasets, want 1", got)
	}
	st := s.one(`MATCH (d:Dataset {key: $k}) RETURN size(d.projState) AS n`, map[string]any{"k": s.dsKey("hub")})
	sealedDump := s.dump()

	s.wipe()
	all := append(append([]olevent.Event(nil), inOrder...), late)
	s.apply(all...)
	if d := s.dump(); d != sealedDump {
		t.Fatalf("sealed and restored log gives another graph than applying all at once:\n%s", diffLines(sealedDump, d))
	}
	b := s.one(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field {path: 'b'}) WITH f ORDER BY f.validFrom
		RETURN collect([f.validFrom, f.validTo]) AS h`, map[string]any{"k": s.dsKey("hub")})
	if want := fmt.Sprint([][]int64{{s.ms(1), s.ms(250)}, {s.ms(251), 253402300799999}}); fmt.Sprint(b["h"]) != want {
		t.Fatalf("field b histories %v, want %v", b["h"], want)
	}
	if n := st["n"].(int64); n > 64<<10 {
		t.Fatalf("hub state is %d bytes after %d observations: not bounded", n, reads)
	}
}

// A late run of a job with a long history folds from the latest stored checkpoint before its start, not from all
// the job's runs, and the graph is exactly that of applying every event at once.
func TestScenarioLateRunFoldsFromAStoredCheckpoint(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	var all []olevent.Event
	const step = 20 * 60 // a run every 20 minutes for 10 hours
	for i := range 30 {
		start := runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*step, fmt.Sprint("r", i), in, out)
		done := runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*step+60, fmt.Sprint("r", i), in, out)
		s.apply(start)
		s.apply(done)
		all = append(all, start, done)
	}
	stored := s.one(`MATCH (c:JobCheckpoint {jobKey: $k}) RETURN count(c) AS n`, map[string]any{"k": s.jobKey("job")})
	if stored["n"].(int64) < 3 {
		t.Fatalf("%v stored checkpoints after 10 hours of runs, want one per hour", stored["n"])
	}
	late := runEvAt(s, "late", olevent.TypeComplete, 25*step+300, "late", in, s.ds("dst2"))
	s.p.stepTimes = map[string]time.Duration{}
	s.apply(late)
	if full, from := s.p.stepTimes["jobs folded in full"], s.p.stepTimes["jobs folded from a checkpoint"]; full != 0 || from != 1 {
		t.Fatalf("late run: %d jobs folded in full, %d from a checkpoint; want 0 and 1", full, from)
	}
	s.p.stepTimes = nil
	incremental := s.dump()
	s.wipe()
	s.query(`MATCH (c:JobCheckpoint {jobKey: $k}) DELETE c`, map[string]any{"k": s.jobKey("job")})
	s.apply(append(all, late)...)
	if d := s.dump(); d != incremental {
		t.Fatalf("a late run folded from a stored checkpoint gives another graph:\n%s", diffLines(incremental, d))
	}
}

func runEvAt(s *scen, id, typ string, sec int, run string, in, out olevent.Dataset) olevent.Event {
	return s.runEv(id, typ, sec, "job", run, []olevent.Dataset{in}, []olevent.Dataset{out})
}

// Stored checkpoint copies are kept for a day of event time: older ones are deleted as new ones are stored.
func TestStoredCheckpointsKeepADay(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("src"), s.ds("dst")
	const hour = 60 * 60
	for i := range 40 { // a run every 2 hours for 80 hours
		s.apply(runEvAt(s, fmt.Sprint("s", i), olevent.TypeStart, i*2*hour, fmt.Sprint("r", i), in, out),
			runEvAt(s, fmt.Sprint("c", i), olevent.TypeComplete, i*2*hour+60, fmt.Sprint("r", i), in, out))
	}
	got := s.one(`MATCH (c:JobCheckpoint {jobKey: $k}) RETURN count(c) AS n, min(c.at) AS lo, max(c.at) AS hi`,
		map[string]any{"k": s.jobKey("job")})
	if n := got["n"].(int64); n < 2 || n > 13 || got["hi"].(int64)-got["lo"].(int64) > storedCheckpointHorizon {
		t.Fatalf("stored copies after 80 hours: %v (want at most a day's worth)", got)
	}
}
