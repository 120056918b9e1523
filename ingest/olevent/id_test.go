package olevent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestResolveIDPrecedence(t *testing.T) {
	d := newTestDecoder(t, DefaultLimits())
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
		{"long header is hashed", withEnvelope, strings.Repeat("h", maxEventIDBytes+1), HashedIDPrefix},
		{"deterministic", minimalRun(), "", DeterministicIDPrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := decodeOK(t, d, mustJSON(t, tt.doc))
			ResolveID(tt.header, &ev)
			if !strings.HasPrefix(ev.ID, tt.want) || (!strings.HasSuffix(tt.want, ":") && ev.ID != tt.want) {
				t.Fatalf("ID = %q, want %q", ev.ID, tt.want)
			}
		})
	}
}

func TestDeterministicIDStableUnderReordering(t *testing.T) {
	d := newTestDecoder(t, DefaultLimits())
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
		ResolveID("", &ev)
		if ev.ID != DeterministicID([]byte(raw)) {
			t.Fatalf("%s: id from the parsed document %s differs from the id over the bytes %s", name, ev.ID, DeterministicID([]byte(raw)))
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
	if len(ids["a"]) != len(DeterministicIDPrefix)+64 {
		t.Errorf("id %q is not sha256 hex", ids["a"])
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,"x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`{"n":1.0,"m":-0,"e":1e2,"f":0.1,"g":1E30}`, `{"e":100,"f":0.1,"g":1e+30,"m":0,"n":1}`},
		{`{"s":"a<b>&\u0041\n"}`, `{"s":"a<b>&A\n"}`},
		{`{"é":1,"z":2,"a":3}`, `{"a":3,"z":2,"é":1}`},
	}
	for _, tt := range tests {
		got, err := canonicalJSON([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("canonicalJSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestPartitionKeyPrecedence(t *testing.T) {
	job := &Job{Namespace: "ns", Name: "task"}
	parent := &ParentRef{JobNamespace: "ns", JobName: "dag"}
	root := &ParentRef{JobNamespace: "root-ns", JobName: "top"}
	tests := []struct {
		ev   Event
		want string
	}{
		{Event{Kind: KindRun, Job: job, Run: &Run{}}, "run:ns/task"},
		{Event{Kind: KindRun, Job: job, Run: &Run{Parent: parent}}, "run:ns/dag"},
		{Event{Kind: KindRun, Job: job, Run: &Run{Parent: parent, Root: root}}, "run:root-ns/top"},
		{Event{Kind: KindJob, Job: job}, "job:ns/task"},
		{Event{Kind: KindDataset, Dataset: &Dataset{Namespace: "s3://b", Name: "k"}}, "dataset:s3://b/k"},
	}
	for _, tt := range tests {
		if got := PartitionKey(&tt.ev); got != tt.want {
			t.Errorf("PartitionKey = %q, want %q", got, tt.want)
		}
	}
}

// The fast path of writeString must write exactly what encoding/json writes, or deterministic ids would change.
func TestWriteStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", "a\"b", "back\\slash", "<html>&", "tab\there", "nul\x00", "del\x7f", "é", "\u2028",
		"\xff\xfe", "s3://bucket/path?x=1#frag"}
	for c := range 256 {
		cases = append(cases, "x"+string(rune(c))+"y", "x"+string([]byte{byte(c)})+"y")
	}
	for _, s := range cases {
		var fast, slow bytes.Buffer
		writeString(&fast, s)
		enc := json.NewEncoder(&slow)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if want := strings.TrimSuffix(slow.String(), "\n"); fast.String() != want {
			t.Errorf("writeString(%q) = %s, encoding/json %s", s, fast.String(), want)
		}
	}
}
