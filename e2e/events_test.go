package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
)

// pipelineEvents returns runs of a three-step pipeline (extract -> clean -> aggregate) repeated `runs` times,
// each run a START and a COMPLETE, the clean step with column lineage, plus one FAIL with a partial output.
// It returns the raw events and the ids the consumer will resolve for them (no header: envelope or digest).
func pipelineEvents(t *testing.T, s scope, runs int) ([][]byte, []string) {
	t.Helper()
	// Runs are 10 minutes apart and all in the past (the fault suite sends up to 40).
	base := time.Now().UTC().Add(-max(2*time.Hour, time.Duration(runs)*10*time.Minute+time.Hour)).Truncate(time.Second)
	var out [][]byte
	step := func(job, in, out string, cl bool, at time.Time, state string) [][]byte {
		id := uuid.NewString()
		ev := func(typ string, ts time.Time, facets string) []byte {
			return []byte(fmt.Sprintf(`{"eventType":%q,"eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":%q,"name":%q},"inputs":[{"namespace":%q,"name":%q}],"outputs":[{"namespace":%q,"name":%q%s}]}`,
				typ, ts.Format(time.RFC3339Nano), id, s.jobNS, job, s.dsNS, in, s.dsNS, out, facets))
		}
		facets := ""
		if cl {
			facets = fmt.Sprintf(`,"facets":{"schema":{"_producer":"https://example.com/e2e","_schemaURL":"https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet","fields":[{"name":"id","type":"long"},{"name":"amount","type":"decimal"}]},"columnLineage":{"_producer":"https://example.com/e2e","_schemaURL":"https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet","fields":{"id":{"inputFields":[{"namespace":%q,"name":%q,"field":"id","transformations":[{"type":"DIRECT","subtype":"IDENTITY","masking":false}]}]},"amount":{"inputFields":[{"namespace":%q,"name":%q,"field":"amount","transformations":[{"type":"DIRECT","subtype":"TRANSFORMATION","masking":false}]}]}}}}`, s.dsNS, in, s.dsNS, in)
		}
		return [][]byte{ev("START", at, ""), ev(state, at.Add(2*time.Minute), facets)}
	}
	for r := range runs {
		at := base.Add(time.Duration(r) * 10 * time.Minute)
		out = append(out, step("extract", "src/orders", "raw/orders", false, at, "COMPLETE")...)
		out = append(out, step("clean", "raw/orders", "clean/orders", true, at.Add(3*time.Minute), "COMPLETE")...)
		out = append(out, step("aggregate", "clean/orders", "mart/revenue", false, at.Add(6*time.Minute), "COMPLETE")...)
	}
	out = append(out, step("experiment", "mart/revenue", "mart/experiment", false, base.Add(time.Hour), "FAIL")...)
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(out))
	for i, raw := range out {
		ev, err := dec.Decode(raw)
		if err != nil {
			t.Fatalf("fixture event %d invalid: %v", i, err)
		}
		olevent.ResolveID("", &ev)
		ids[i] = ev.ID
	}
	return out, ids
}

func newUUID() string { return uuid.NewString() }

// resolveID is the id the gateway and consumer give an event sent without an id header.
func resolveID(t *testing.T, raw []byte) string {
	t.Helper()
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := dec.Decode(raw)
	if err != nil {
		t.Fatalf("fixture invalid: %v", err)
	}
	olevent.ResolveID("", &ev)
	return ev.ID
}

func sortStrings(xs []string) { sort.Strings(xs) }
