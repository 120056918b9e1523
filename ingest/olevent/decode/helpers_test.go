package decode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// testNow is the fixed clock of the tests; fixtures are dated 2026-03-01.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestDecoder(t testing.TB, lim olevent.Limits) *Decoder {
	t.Helper()
	d, err := NewDecoder(lim, func() time.Time { return testNow })
	if err != nil {
		t.Fatalf("NewDecoder: %v", err)
	}
	return d
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeOK(t *testing.T, d *Decoder, raw []byte) olevent.Event {
	t.Helper()
	ev, err := d.Decode(raw)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return ev
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func asValidation(t *testing.T, err error) *olevent.ValidationError {
	t.Helper()
	var ve *olevent.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	return ve
}

// minimalRun is the smallest valid RunEvent as a generic document tests can mutate.
func minimalRun() map[string]any {
	return map[string]any{
		"eventType": "START",
		"eventTime": "2026-03-01T11:00:00Z",
		"producer":  "https://example.com/producer",
		"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
		"run":       map[string]any{"runId": "0195906a-1f2e-7c3d-8e4f-5a6b7c8d9e0f"},
		"job":       map[string]any{"namespace": "ns", "name": "job"},
		"inputs":    []any{map[string]any{"namespace": "postgres://db:5432", "name": "a.b.c"}},
		"outputs":   []any{map[string]any{"namespace": "s3://bucket", "name": "key"}},
	}
}

func sub(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

func item(m map[string]any, list string, i int) map[string]any {
	return m[list].([]any)[i].(map[string]any)
}

func findIssue(ev olevent.Event, path string) *olevent.FacetIssue {
	for i := range ev.FacetIssues {
		if ev.FacetIssues[i].Path == path {
			return &ev.FacetIssues[i]
		}
	}
	return nil
}
