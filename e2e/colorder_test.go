package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/internal/testenv"
)

// colRunEvent is a COMPLETE RunEvent of job with one input and one output whose columnLineage maps out.field <-
// in.field (DIRECT IDENTITY), no schemas: the fields exist because column lineage names them.
func colRunEvent(t *testing.T, sc scope, job, runID, in, out, field string, at time.Time) ([]byte, string) {
	t.Helper()
	id := uuid.NewString()
	ds := func(name string) map[string]any { return map[string]any{"namespace": sc.dsNS, "name": name} }
	output := ds(out)
	output["facets"] = map[string]any{"columnLineage": map[string]any{
		"_producer": "https://example.com/e2e", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
		"fields": map[string]any{field: map[string]any{"inputFields": []any{map[string]any{
			"namespace": sc.dsNS, "name": in, "field": field,
			"transformations": []any{map[string]any{"type": "DIRECT", "subtype": "IDENTITY"}}}}}}}}
	b, err := json.Marshal(map[string]any{"eventId": id, "eventType": "COMPLETE", "eventTime": at.UTC().Format(time.RFC3339Nano),
		"producer": "https://example.com/e2e", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
		"run": map[string]any{"runId": runID}, "job": map[string]any{"namespace": sc.jobNS, "name": job},
		"inputs": []any{ds(in)}, "outputs": []any{output}})
	if err != nil {
		t.Fatal(err)
	}
	return b, id
}

// Issue 14 item 0 through the public API: a run b->c with c.amount <- b.amount that is projected before the earlier
// run a->b (which first names b.amount) keeps its column edge. Read with an explicit asOf (no cache), field-level
// upstream lineage of c.amount reaches b.amount and a.amount and reports no NO_COLUMN_LINEAGE gap, exactly as when
// the events arrive in event-time order.
func TestColumnLineageSurvivesOutOfOrderArrival(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t))
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	for _, order := range []string{"in order", "reversed"} {
		t.Run(strings.ReplaceAll(order, " ", "-"), func(t *testing.T) {
			sc := newScope(t)
			t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
			ab, abID := colRunEvent(t, sc, "ab", uuid.NewString(), "a", "b", "amount", t0.Add(20*time.Second))
			bc, bcID := colRunEvent(t, sc, "bc", uuid.NewString(), "b", "c", "amount", t0.Add(40*time.Second))
			type sent struct {
				body []byte
				id   string
			}
			sends := []sent{{ab, abID}, {bc, bcID}}
			if order == "reversed" {
				sends[0], sends[1] = sends[1], sends[0]
			}
			for _, s := range sends {
				if c := send(t, api, token, s.body); c != http.StatusAccepted {
					t.Fatalf("send: %d", c)
				}
				waitEvents(t, store, []string{s.id}, projectTimeout) // each projected in its own batch
			}
			d, errs := gqlErrs(t, api, token, `query($ns: String!, $asOf: Time!) {
				lineage(start: {field: {namespace: $ns, name: "c", field: "amount"}}, direction: UPSTREAM, depth: 3,
					granularity: FIELD, asOf: $asOf) {
					nodes { __typename ... on Field { path dataset { name } } } edges { from to } gaps { kind } } }`,
				map[string]any{"ns": sc.dsNS, "asOf": t0.Add(time.Minute).UTC().Format(time.RFC3339Nano)})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			g := d["lineage"].(map[string]any)
			var fields []string
			for _, n := range g["nodes"].([]any) {
				m := n.(map[string]any)
				fields = append(fields, m["dataset"].(map[string]any)["name"].(string)+"."+m["path"].(string))
			}
			if s := strings.Join(fields, ","); s != "c.amount,b.amount,a.amount" || len(g["edges"].([]any)) != 2 {
				t.Fatalf("%s: upstream of c.amount: fields %s, %d edges, want c.amount,b.amount,a.amount and 2 edges: %s",
					order, s, len(g["edges"].([]any)), jsonOf(g))
			}
			if s := jsonOf(g["gaps"]); strings.Contains(s, "NO_COLUMN_LINEAGE") {
				t.Fatalf("%s: gaps %s", order, s)
			}
		})
	}
}
