package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

// The generated manifests are dbt manifests the import reads (every model declared, with its tests), and the
// candidate's diff is what the generator says it changes: 10 removed, 10 added, 5 renamed by meta, 50 columns
// dropped and 20 retyped, dependencies changed.
func TestGenManifests(t *testing.T) {
	base, cand := genManifests("p", 500, 10, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	read := func(doc map[string]any) []declare.DeclaredNode {
		raw, _ := json.Marshal(doc)
		m, err := dbtmanifest.Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := declare.FromManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Exposures) != 2 {
			t.Fatalf("%d exposures, want 2 (one per 250 models)", len(m.Exposures))
		}
		return nodes
	}
	b, c := read(base), read(cand)
	if len(b) != 500 || len(c) != 500 || len(b[0].Tests) != 2 || len(b[0].Columns) != 5 {
		t.Fatalf("%d and %d nodes, %d tests and %d columns of the first", len(b), len(c), len(b[0].Tests), len(b[0].Columns))
	}
	d, err := declare.Diff(b, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Added) != 10 || len(d.Removed) != 10 || len(d.Renamed) != 5 || len(d.Columns) != 70 || len(d.Dependencies) == 0 {
		t.Fatalf("diff: %d added, %d removed, %d renamed, %d columns, %d dependencies", len(d.Added), len(d.Removed), len(d.Renamed), len(d.Columns), len(d.Dependencies))
	}
}
