package decode

import (
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestResolveIDPrecedence(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	withEnvelope := minimalRun()
	withEnvelope["eventId"] = "env-123"
	tests := []struct {
		name   string
		doc    map[string]any
		header string
		want   string
	}{
		{"header wins", withEnvelope, "hdr-9", "hdr-9"},
		{"blank header falls back to envelope", withEnvelope, "  ", "env-123"},
		{"envelope", withEnvelope, "", "env-123"},
		{"long header is hashed", withEnvelope, strings.Repeat("h", olevent.MaxEventIDBytes+1), olevent.HashedIDPrefix},
		{"deterministic", minimalRun(), "", olevent.DeterministicIDPrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := decodeOK(t, d, mustJSON(t, tt.doc))
			olevent.ResolveID(tt.header, &ev)
			if !strings.HasPrefix(ev.ID, tt.want) || (!strings.HasSuffix(tt.want, ":") && ev.ID != tt.want) {
				t.Fatalf("ID = %q, want %q", ev.ID, tt.want)
			}
		})
	}
}

func TestDeterministicIDStableUnderReordering(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
	a := `{"eventType":"START","eventTime":"2026-03-01T11:00:00Z","producer":"https://p","schemaURL":"https://s",
	  "run":{"runId":"0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f","facets":{"x":{"n":1.50,"big":12345678901234567890,"s":"<é>"}}},
	  "job":{"namespace":"ns","name":"j"}}`
	b := `{ "job" : {"name":"j","namespace":"ns"}, "run":{"facets":{"x":{"s":"<\u00e9>","big":12345678901234567890,"n":1.5}},
	  "runId":"0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f"},"schemaURL":"https://s","producer":"https://p",
	  "eventTime":"2026-03-01T11:00:00Z","eventType":"START"}`
	retry := strings.Replace(a, "11:00:00Z", "11:00:05Z", 1)
	otherBig := strings.Replace(a, "12345678901234567890", "12345678901234567891", 1)
	ids := map[string]string{}
	for name, raw := range map[string]string{"a": a, "b": b, "retry": retry, "otherBig": otherBig} {
		ev := decodeOK(t, d, []byte(raw))
		olevent.ResolveID("", &ev)
		if ev.ID != olevent.DeterministicID([]byte(raw)) {
			t.Fatalf("%s: id from the parsed document %s differs from the id over the bytes %s", name, ev.ID, olevent.DeterministicID([]byte(raw)))
		}
		ids[name] = ev.ID
	}
	if ids["a"] != ids["b"] {
		t.Errorf("reordered keys/whitespace/escapes changed the id: %s vs %s", ids["a"], ids["b"])
	}
	if ids["a"] == ids["retry"] {
		t.Error("a new eventTime must give a new id")
	}
	if ids["a"] == ids["otherBig"] {
		t.Error("large integers must keep every digit")
	}
	if len(ids["a"]) != len(olevent.DeterministicIDPrefix)+64 {
		t.Errorf("id %q is not sha256 hex", ids["a"])
	}
}

func TestPartitionKeyPrecedence(t *testing.T) {
	job := &olevent.Job{Namespace: "ns", Name: "task"}
	parent := &olevent.ParentRef{JobNamespace: "ns", JobName: "dag"}
	root := &olevent.ParentRef{JobNamespace: "root-ns", JobName: "top"}
	tests := []struct {
		ev   olevent.Event
		want string
	}{
		{olevent.Event{Kind: olevent.KindRun, Job: job, Run: &olevent.Run{}}, "run:ns/task"},
		{olevent.Event{Kind: olevent.KindRun, Job: job, Run: &olevent.Run{Parent: parent}}, "run:ns/dag"},
		{olevent.Event{Kind: olevent.KindRun, Job: job, Run: &olevent.Run{Parent: parent, Root: root}}, "run:root-ns/top"},
		{olevent.Event{Kind: olevent.KindJob, Job: job}, "job:ns/task"},
		{olevent.Event{Kind: olevent.KindDataset, Dataset: &olevent.Dataset{Namespace: "s3://b", Name: "k"}}, "dataset:s3://b/k"},
	}
	for _, tt := range tests {
		if got := olevent.PartitionKey(&tt.ev); got != tt.want {
			t.Errorf("PartitionKey = %q, want %q", got, tt.want)
		}
	}
}
