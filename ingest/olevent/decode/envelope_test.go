package decode

import (
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestDecodeRejectsBadEnvelope(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		field  string
		rule   string
	}{
		{"missing eventTime", func(m map[string]any) { delete(m, "eventTime") }, "eventTime", olevent.RuleRequired},
		{"missing producer", func(m map[string]any) { delete(m, "producer") }, "producer", olevent.RuleRequired},
		{"missing schemaURL", func(m map[string]any) { delete(m, "schemaURL") }, "schemaURL", olevent.RuleRequired},
		{"missing job", func(m map[string]any) { delete(m, "job") }, "job", olevent.RuleRequired},
		{"missing runId", func(m map[string]any) { delete(sub(m, "run"), "runId") }, "run.runId", olevent.RuleRequired},
		{"missing job name", func(m map[string]any) { delete(sub(m, "job"), "name") }, "job.name", olevent.RuleRequired},
		{"missing input namespace", func(m map[string]any) { delete(item(m, "inputs", 0), "namespace") }, "inputs[0].namespace", olevent.RuleRequired},
		{"eventTime without offset", func(m map[string]any) { m["eventTime"] = "2026-03-01T11:00:00" }, "eventTime", olevent.RuleFormat},
		{"eventTime not a date", func(m map[string]any) { m["eventTime"] = "yesterday" }, "eventTime", olevent.RuleFormat},
		{"eventTime a number", func(m map[string]any) { m["eventTime"] = 1700000000 }, "eventTime", olevent.RuleType},
		{"producer not a URI", func(m map[string]any) { m["producer"] = "my producer" }, "producer", olevent.RuleFormat},
		{"schemaURL not a URI", func(m map[string]any) { m["schemaURL"] = "2-0-2" }, "schemaURL", olevent.RuleFormat},
		{"runId not a UUID", func(m map[string]any) { sub(m, "run")["runId"] = "run-42" }, "run.runId", olevent.RuleUUID},
		{"runId braces", func(m map[string]any) { sub(m, "run")["runId"] = "{0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f}" }, "run.runId", olevent.RuleUUID},
		{"runId a number", func(m map[string]any) { sub(m, "run")["runId"] = 42 }, "run.runId", olevent.RuleType},
		{"unknown eventType", func(m map[string]any) { m["eventType"] = "FINISHED" }, "eventType", olevent.RuleEnum},
		{"lower-case eventType", func(m map[string]any) { m["eventType"] = "start" }, "eventType", olevent.RuleEnum},
		{"empty job namespace", func(m map[string]any) { sub(m, "job")["namespace"] = "" }, "job.namespace", olevent.RuleNotEmpty},
		{"empty output name", func(m map[string]any) { item(m, "outputs", 0)["name"] = "" }, "outputs[0].name", olevent.RuleNotEmpty},
		{"job name a number", func(m map[string]any) { sub(m, "job")["name"] = 7 }, "job.name", olevent.RuleType},
		{"inputs an object", func(m map[string]any) { m["inputs"] = map[string]any{} }, "inputs", olevent.RuleType},
		{"output item a string", func(m map[string]any) { m["outputs"] = []any{"s3://b/k"} }, "outputs[0]", olevent.RuleType},
		{"facets an array", func(m map[string]any) { sub(m, "run")["facets"] = []any{} }, "run.facets", olevent.RuleType},
		{"run a string", func(m map[string]any) { m["run"] = "x" }, "run", olevent.RuleType},
		{"eventId empty", func(m map[string]any) { m["eventId"] = "" }, "eventId", olevent.RuleNotEmpty},
		{"far future", func(m map[string]any) { m["eventTime"] = "2026-03-01T12:30:00Z" }, "eventTime", olevent.RuleTooFarInFuture},
		{"before horizon", func(m map[string]any) { m["eventTime"] = "2024-01-01T00:00:00Z" }, "eventTime", olevent.RuleBeforeHorizon},
		{"no shape", func(m map[string]any) { delete(m, "run"); delete(m, "job") }, "$", olevent.RuleShape},
		{"case variant of run", func(m map[string]any) { m["RUN"] = map[string]any{"runId": "x"} }, "RUN", olevent.RuleFieldCase},
		{"case variant of runId", func(m map[string]any) { sub(m, "run")["RunId"] = "x" }, "run.RunId", olevent.RuleFieldCase},
		{"case variant in a dataset", func(m map[string]any) { item(m, "outputs", 0)["Name"] = "y" }, "outputs[0].Name", olevent.RuleFieldCase},
		{"dataset next to job", func(m map[string]any) { m["dataset"] = map[string]any{"namespace": "a", "name": "b"} }, "dataset", olevent.RuleShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minimalRun()
			tt.mutate(m)
			_, err := d.Decode(mustJSON(t, m))
			ve := asValidation(t, err)
			if ve.Field != tt.field || ve.Rule != tt.rule {
				t.Fatalf("got field %q rule %q (%s), want %q %q", ve.Field, ve.Rule, ve.Message, tt.field, tt.rule)
			}
			if !strings.Contains(ve.Message, strings.TrimPrefix(tt.field, "$")) || ve.Message == "" {
				t.Errorf("message %q does not name the field %q", ve.Message, tt.field)
			}
		})
	}
}

func TestDecodeRejectsNonEvents(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	for _, raw := range []string{``, `[]`, `"x"`, `{`, `{"a":1}{"b":2}`, `{"eventTime":}`, `null`} {
		_, err := d.Decode([]byte(raw))
		ve := asValidation(t, err)
		if ve.Rule != olevent.RuleJSON && ve.Rule != olevent.RuleShape {
			t.Errorf("%q: rule %s (%s)", raw, ve.Rule, ve.Message)
		}
	}
}

func TestDecodeShapes(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	job := minimalRun()
	delete(job, "run")
	delete(job, "eventType")
	ds := map[string]any{"eventTime": "2026-03-01T11:00:00Z", "producer": "https://p", "schemaURL": "https://s",
		"dataset": map[string]any{"namespace": "s3://b", "name": "k"}}
	noType := minimalRun()
	delete(noType, "eventType")
	tests := []struct {
		name  string
		doc   map[string]any
		kind  olevent.Kind
		etype string
	}{
		{"run", minimalRun(), olevent.KindRun, olevent.TypeStart},
		{"run without eventType is OTHER", noType, olevent.KindRun, olevent.TypeOther},
		{"job", job, olevent.KindJob, ""},
		{"dataset", ds, olevent.KindDataset, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := decodeOK(t, d, mustJSON(t, tt.doc))
			if ev.Kind != tt.kind || ev.EventType != tt.etype {
				t.Fatalf("got %s/%q, want %s/%q", ev.Kind, ev.EventType, tt.kind, tt.etype)
			}
		})
	}
}

func TestDecodeAcceptsNullLists(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	m := minimalRun()
	m["inputs"], m["outputs"] = nil, nil
	sub(m, "job")["facets"] = nil
	ev := decodeOK(t, d, mustJSON(t, m))
	if len(ev.Inputs)+len(ev.Outputs) != 0 || ev.Job.Facets != nil {
		t.Fatalf("null lists: %+v", ev)
	}
}
