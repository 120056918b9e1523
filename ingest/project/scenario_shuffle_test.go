package project

import (
	"math/rand/v2"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// richHistory is several runs of two jobs with schema changes, column lineage, a failed run, a closing run, a
// DatasetEvent with metadata, a JobEvent, a quality gate, a drop/create of one dataset, and a third job that
// reports a FAIL under build's runId r1 (issue 13 item 2: its own run, whatever the order).
func richHistory(s *scen) []olevent.Event {
	src := withSchema(s.ds("src"), "id", "amount", "email")
	col := func(fields ...string) *olevent.ColumnLineage {
		cl := &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{}}
		for _, f := range fields {
			cl.Fields[f] = []olevent.InputField{{Namespace: s.dsNS(), Name: "src", Field: f,
				Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}}}
		}
		return cl
	}
	mart := func(fields ...string) olevent.Dataset {
		d := withSchema(s.ds("mart"), fields...)
		d.ColumnLineage = col(fields...)
		return d
	}
	meta := s.ds("mart")
	meta.Description = "the mart"
	meta.Tags = []olevent.Tag{{Key: "tier", Value: "gold"}}
	drop := s.ds("side")
	drop.Lifecycle = &olevent.Lifecycle{State: "DROP"}
	create := withSchema(s.ds("side"), "k")
	create.Lifecycle = &olevent.Lifecycle{State: "CREATE"}
	ins := []olevent.Dataset{src, s.ds("side")}
	jobEv := olevent.Event{ID: s.ns + "-jobev", Kind: olevent.KindJob, EventTime: s.at(5), Producer: "dbt",
		Job: &olevent.Job{Namespace: s.jobNS(), Name: "build", SQL: "select"}, Inputs: []olevent.Dataset{s.ds("src")},
		Outputs: []olevent.Dataset{s.ds("mart")}}
	return []olevent.Event{
		jobEv,
		s.runEv("r1s", olevent.TypeStart, 10, "build", "r1", ins, nil, func(e *olevent.Event) { e.Job.Description = "old" }),
		s.runEv("r1c", olevent.TypeComplete, 20, "build", "r1", ins, []olevent.Dataset{mart("id", "amount", "email")}),
		s.runEv("r2s", olevent.TypeStart, 30, "build", "r2", []olevent.Dataset{src}, nil),
		s.runEv("r2f", olevent.TypeFail, 35, "build", "r2", nil, []olevent.Dataset{mart("id")}),
		s.dsEv("meta", 36, meta),
		s.dsEv("drop", 38, drop),
		s.runEv("r3s", olevent.TypeStart, 40, "build", "r3", []olevent.Dataset{src}, nil,
			func(e *olevent.Event) { e.Job.ProcessingType = "BATCH" }),
		s.runEv("r3c", olevent.TypeComplete, 50, "build", "r3", nil, []olevent.Dataset{mart("id", "amount")}),
		s.dsEv("create", 55, create),
		s.runEv("r4s", olevent.TypeStart, 60, "export", "r4", []olevent.Dataset{s.ds("mart")}, []olevent.Dataset{s.ds("side")}),
		s.runEv("r4r", olevent.TypeRunning, 65, "export", "r4", nil, nil),
		s.runEv("r4c", olevent.TypeComplete, 70, "export", "r4", nil, nil),
		s.runEv("r5s", olevent.TypeStart, 80, "build", "r5", []olevent.Dataset{src, s.ds("side")}, nil),
		s.runEv("r5c", olevent.TypeComplete, 90, "build", "r5", nil, []olevent.Dataset{mart("id", "amount", "email")},
			func(e *olevent.Event) { e.Job.Description = "new" }),
		s.runEv("hijack", olevent.TypeFail, 95, "squatter", "r1", []olevent.Dataset{s.ds("src")},
			[]olevent.Dataset{s.ds("loot")}, func(e *olevent.Event) { e.Run.ErrorMessage = "hijack" }),
	}
}

func TestScenarioShuffledHistoryGivesTheSameGraph(t *testing.T) {
	s := newScen(t)
	evs := richHistory(s)
	for _, e := range evs {
		s.apply(e)
	}
	want := s.dump()
	// the FAIL run's output schema (id only) does not close mart's fields; r3's COMPLETE schema closes email.
	rows := s.query(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field {path: 'email'}) RETURN f.validFrom AS f, f.validTo AS t
		ORDER BY f`, map[string]any{"k": s.dsKey("mart")})
	if len(rows) != 2 || rows[0]["t"] != s.ms(50) || rows[1]["f"] != s.ms(90) {
		t.Fatalf("mart.email histories %v", rows)
	}
	j := s.one(`MATCH (j:Job {key: $k}) RETURN j.description AS d, j.processingType AS pt`, map[string]any{"k": s.jobKey("build")})
	if j["d"] != "new" || j["pt"] != "BATCH" {
		t.Fatalf("job metadata %v", j)
	}
	r1 := s.one(`MATCH (r:Run {key: $k}) RETURN r.state AS st, r.jobKey AS j`, map[string]any{"k": s.runKey("build", "r1")})
	if r1["st"] != olevent.TypeComplete || r1["j"] != s.jobKey("build") {
		t.Fatalf("build's r1 after another job's FAIL under its runId: %v", r1)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 8 {
		s.wipe()
		order := append([]olevent.Event(nil), evs...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for len(order) > 0 {
			n := 1 + rng.IntN(4)
			n = min(n, len(order))
			batch := append([]olevent.Event(nil), order[:n]...)
			if rng.IntN(3) == 0 {
				batch = append(batch, order[0]) // a redelivery inside the batch
			}
			s.apply(batch...)
			order = order[n:]
		}
		if rng.IntN(2) == 0 {
			s.apply(evs[rng.IntN(len(evs))]) // a redelivery after the fact
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d differs:\n%s", round, diffLines(want, got))
		}
	}
}
