package identcheck_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/identcheck"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/loadtest/gen"
)

var demoTimes, demoRuns = regexp.MustCompile(`__T[0-9]+__`), regexp.MustCompile(`__RUN_[A-Z]__`)

func newDecoder(t *testing.T) *identcheck.Decoder {
	t.Helper()
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	return identcheck.New(dec, norm)
}

// Real producers' events (Airflow, Spark, dbt, Flink, a rename, declared lineage) and the demo's pass every check.
func TestProducerFixturesPass(t *testing.T) {
	d := newDecoder(t)
	files, _ := filepath.Glob("../olevent/decode/testdata/*.json")
	demo, _ := filepath.Glob("../../demo/events/*.json")
	files = append(files, demo...)
	if len(files) < 12 {
		t.Fatalf("fixtures: %v", files)
	}
	decoded := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The demo script fills in __T0__, __T1__, ... and __RUN_A__, __RUN_B__, ...
		raw = demoTimes.ReplaceAll(raw, []byte("2026-11-19T12:00:00Z"))
		raw = demoRuns.ReplaceAll(raw, []byte("0190a7c8-0000-7000-8000-00000000000a"))
		if _, err := d.Decode(raw); err != nil {
			var ve *olevent.ValidationError
			if errors.As(err, &ve) && (ve.Rule == olevent.RuleTooFarInFuture || ve.Rule == olevent.RuleBeforeHorizon) {
				continue // fixture times are fixed; the clock above is only a guess
			}
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		decoded++
	}
	if decoded < len(files)-1 {
		t.Fatalf("only %d of %d fixtures decoded: move the clock", decoded, len(files))
	}
}

// Check names the path of every kind of reference the projector binds.
func TestCheckNamesThePath(t *testing.T) {
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	ok := olevent.Dataset{Namespace: "postgres://db", Name: "s.t"}
	tests := []struct {
		name  string
		ev    olevent.Event
		field string
		rule  string
	}{
		{"parent job", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"},
			Run: &olevent.Run{Parent: &olevent.ParentRef{RunID: "r", JobNamespace: "p\x1b", JobName: "n"}}},
			"run.facets.parent.job.namespace", normalize.RuleControl},
		{"root job", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"},
			Run: &olevent.Run{Root: &olevent.ParentRef{RunID: "r", JobNamespace: "p", JobName: " n"}}},
			"run.facets.parent.root.job.name", normalize.RuleWhitespace},
		{"dataset event", olevent.Event{Dataset: &olevent.Dataset{Namespace: "postgres://db", Name: "x\u0085"}},
			"dataset.name", normalize.RuleControl},
		{"lineage facet input", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"}, Outputs: []olevent.Dataset{ok,
			{Namespace: "postgres://db", Name: "o", Lineage: &olevent.LineageFacet{AllInputs: []olevent.LineageInput{
				{Type: olevent.EntityJob, Namespace: "j\x00", Name: "not projected"},
				{Type: olevent.EntityDataset, Namespace: "postgres://db", Name: "in", Field: "f\x7f"}}}}}},
			"outputs[1].facets.lineage.inputs[1].field", normalize.RuleControl},
		{"input namespace", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"},
			Inputs: []olevent.Dataset{{Namespace: "postgres://db\xff", Name: "t"}}}, "inputs[0].namespace", normalize.RuleUTF8},
		// An Iceberg metadata table is named by the symlink it was sent with (ADR 0025): its own name and the
		// symlinks after it keep the paths the producer sent them at.
		{"metadata table name", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"},
			Inputs: []olevent.Dataset{{Namespace: "file:/wh", Name: "db.t.snapshots\x1b",
				MetadataTable: &olevent.MetadataTable{Base: olevent.Identifier{Namespace: "file", Name: "/wh/db/t"}, Symlink: 1}}}},
			"inputs[0].facets.symlinks.identifiers[1].name", normalize.RuleControl},
		{"symlink after a metadata table's", olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"},
			Inputs: []olevent.Dataset{{Namespace: "file:/wh", Name: "db.t.snapshots",
				Symlinks:      []olevent.Identifier{{Namespace: "file:/wh", Name: "a"}, {Namespace: "file:/wh", Name: "b\x1b"}},
				MetadataTable: &olevent.MetadataTable{Base: olevent.Identifier{Namespace: "file", Name: "/wh/db/t"}, Symlink: 1}}}},
			"inputs[0].facets.symlinks.identifiers[2].name", normalize.RuleControl},
	}
	for _, tt := range tests {
		ve := identcheck.Check(norm, &tt.ev)
		if ve == nil || ve.Field != tt.field || ve.Rule != tt.rule {
			t.Errorf("%s: %+v, want %s at %s", tt.name, ve, tt.rule, tt.field)
		}
	}
	good := olevent.Event{Job: &olevent.Job{Namespace: "j", Name: "n"}, Inputs: []olevent.Dataset{ok}, Outputs: []olevent.Dataset{ok}}
	if ve := identcheck.Check(norm, &good); ve != nil {
		t.Errorf("good event: %v", ve)
	}
}

// BenchmarkCheck measures the identity checks alone on a wide producer fixture (Spark).
func BenchmarkCheck(b *testing.B) {
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC) })
	norm, _ := normalize.New(normalize.Config{DefaultEnv: "prod"})
	raw, err := os.ReadFile("../olevent/decode/testdata/spark_complete.json")
	if err != nil {
		b.Fatal(err)
	}
	ev, err := dec.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ve := identcheck.Check(norm, &ev); ve != nil {
			b.Fatal(ve)
		}
	}
}

// The load generator's synthetic producers (every platform and facet it emits) pass every check, so the benchmarks
// measure accepted events.
func TestLoadGeneratorEventsPass(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := gen.DefaultConfig(7, start)
	c.Datasets, c.HubConsumers = 2000, 100
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return start.Add(30 * 24 * time.Hour) })
	norm, _ := normalize.New(normalize.Config{DefaultEnv: "prod"})
	d := identcheck.New(dec, norm)
	s := w.NewStream()
	decoded := 0
	for i := range 3000 {
		ev := s.Next()
		if _, err := d.Decode(ev.Body); err != nil {
			var ve *olevent.ValidationError
			if errors.As(err, &ve) && (ve.Rule == olevent.RuleTooFarInFuture || ve.Rule == olevent.RuleBeforeHorizon) {
				continue
			}
			t.Fatalf("event %d: %v\n%.300s", i, err, ev.Body)
		}
		decoded++
	}
	if decoded < 2000 {
		t.Fatalf("only %d of 3000 events inside the time bounds: move the clock", decoded)
	}
}
