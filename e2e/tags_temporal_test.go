package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// taggedAt sends a DatasetEvent at t0+at giving dataset name a schema and exactly the tags listed ("field:key" or
// "key"; none: an empty tags facet).
func (w *piiWorld) taggedAt(t *testing.T, at time.Duration, name string, paths []string, tags ...string) {
	t.Helper()
	tt := []any{}
	for _, tg := range tags {
		m := map[string]any{"key": tg, "value": "true", "source": "e2e"}
		if field, key, ok := strings.Cut(tg, ":"); ok {
			m = map[string]any{"key": key, "value": "true", "source": "e2e", "field": field}
		}
		tt = append(tt, m)
	}
	d := w.ds(name)
	d["facets"] = map[string]any{
		"schema": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
			"fields": schemaFacet(paths...)["fields"]},
		"tags": map[string]any{"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json",
			"tags": tt}}
	w.send(t, map[string]any{"eventTime": w.t0.Add(at).UTC().Format(time.RFC3339Nano), "producer": "https://example.com/e2e",
		"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent", "dataset": d})
}

const effectiveAtQ = `query($ns: String!, $asOf: Time) {
  dataset(namespace: $ns, name: "copy", asOf: $asOf) { tags { name }
    effectiveTags { tags { field { path } class source origin { path dataset { name } } } } } }`

// TestTagsInTimeThroughTheGateway: tags are temporal (projection version 6, ADR 0066). customers.email (in the schema from +1m) is
// tagged pii at +2m and untagged at +30m (the next tags facet lists only phone's tag); a job copies email into
// copy.email from +3m. Through the gateway and the consumer, piiFlow and effectiveTags asOf before the tag (+1m30s)
// find no origin, during it (+10m) carry it into copy.email, after it (+40m) find no origin again, while the
// column edge is in force throughout; Dataset.tags is the current list with its source and start; and the flow's
// step through the copy job shows the job's tags (the job tags facet, ADR 0068).
func TestTagsInTimeThroughTheGateway(t *testing.T) {
	w := startPii(t)
	m := time.Minute
	paths := []string{"id", "email", "phone"}
	w.taggedAt(t, 1*m, "customers", paths) // the schema, no tags yet
	w.taggedAt(t, 2*m, "customers", paths, "email:pii")
	w.run(t, "copy", 3*m, []string{"customers"}, "copy", map[string]string{"email": "customers.email DIRECT/IDENTITY"})
	// the copy job's tags facet (ADR 0068): shown on the flow's steps through it
	w.send(t, map[string]any{"eventType": "RUNNING", "eventTime": w.t0.Add(4 * m).UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": uuid.NewString()}, "job": map[string]any{"namespace": w.sc.jobNS, "name": "copy",
			"facets": map[string]any{"tags": map[string]any{"_producer": "https://example.com/e2e",
				"_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsJobFacet.json",
				"tags":       []any{map[string]any{"key": "owner", "value": "crm", "source": "e2e"}}}}}})
	w.taggedAt(t, 30*m, "customers", paths, "phone:pii.phone")
	w.run(t, "copy", 35*m, []string{"customers"}, "copy", map[string]string{"email": "customers.email DIRECT/IDENTITY"})

	projected := func() bool { // the untagging facet and the copy runs are projected
		d, errs := gqlErrs(t, w.api, token, `query($ns: String!) { a: dataset(namespace: $ns, name: "customers") { tags { name source validFrom } }
			b: dataset(namespace: $ns, name: "copy") { id } }`, map[string]any{"ns": w.sc.dsNS})
		b, _ := json.Marshal(d)
		return len(errs) == 0 && d["b"] != nil &&
			strings.Contains(string(b), `"tags":[{"name":"phone:pii.phone=true","source":"e2e","validFrom":"`+w.t0.Add(30*m).UTC().Format("2006-01-02T15:04:05"))
	}
	for deadline := time.Now().Add(60 * time.Second); !projected(); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the events were not projected within 60 s")
		}
	}
	f, raw := w.flow(t, token, "pii", 10*m)
	if got := fmt.Sprint(f.reached()); got != "map[copy.email:CARRIED IDENTITY]" || len(f.Origins) != 1 {
		t.Fatalf("during the tag (+10m): reached %s, want copy.email carried from one origin\n%s", got, raw)
	}
	jobTags := func() (bool, string) {
		d, errs := gqlErrs(t, w.api, token, `query($ns: String!, $asOf: Time) { piiFlow(tag: "pii",
			from: {field: {namespace: $ns, name: "customers", field: "email"}}, asOf: $asOf) { reached { path { edge { job { name tags { name } } } } } } }`,
			map[string]any{"ns": w.sc.dsNS, "asOf": w.t0.Add(10 * m).UTC().Format(time.RFC3339Nano)})
		b, _ := json.Marshal(d)
		return len(errs) == 0 && strings.Contains(string(b), `"job":{"name":"copy","tags":[{"name":"owner=crm"}]}`), string(b)
	}
	ok, got := jobTags()
	for deadline := time.Now().Add(30 * time.Second); !ok && time.Now().Before(deadline); ok, got = jobTags() {
		time.Sleep(500 * time.Millisecond) // the job's event may sit on another partition
	}
	if !ok {
		t.Errorf("the flow's step through copy should show the job's tags: %s", got)
	}
	for _, at := range []time.Duration{90 * time.Second, 40 * m} {
		if f, raw := w.flow(t, token, "pii", at); len(f.Origins) != 0 || len(f.Reached) != 0 {
			t.Errorf("at +%v (customers.email not tagged then): %s", at, raw)
		}
	}

	eff := func(at time.Duration) string {
		d, errs := gqlErrs(t, w.api, token, effectiveAtQ, map[string]any{"ns": w.sc.dsNS, "asOf": w.t0.Add(at).UTC().Format(time.RFC3339Nano)})
		if len(errs) > 0 {
			t.Fatalf("effectiveTags: %v", errs)
		}
		b, _ := json.Marshal(d["dataset"])
		return string(b)
	}
	if got := eff(10 * m); !strings.Contains(got, `"class":"pii","field":{"path":"email"},"origin":{"dataset":{"name":"customers"},"path":"email"},"source":"DERIVED"`) {
		t.Errorf("effective tags of copy at +10m should derive pii from customers.email: %s", got)
	}
	for _, at := range []time.Duration{90 * time.Second, 40 * m} {
		if got := eff(at); strings.Contains(got, `"class":"pii"`) {
			t.Errorf("effective tags of copy at +%v should carry no pii: %s", at, got)
		}
	}
}
