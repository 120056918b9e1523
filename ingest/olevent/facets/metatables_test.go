package facets

import (
	"encoding/json"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// The cases around it: an ordinary Iceberg table called history (two-part name, or its location ends in the
// name), a non-Iceberg dataset, and column lineage that names the base table for a metadata table's column.
func TestIcebergMetadataTableRecognition(t *testing.T) {
	base := olevent.Dataset{Namespace: "file", Name: "/wh/db/orders", Facets: map[string]json.RawMessage{
		"catalog": json.RawMessage(`{"framework":"iceberg","type":"hadoop"}`)},
		Symlinks: []olevent.Identifier{{Namespace: "file:/wh", Name: "db.orders.history", Type: "TABLE"}}}
	for name, c := range map[string]struct {
		mod  func(d *olevent.Dataset)
		want bool
	}{
		"metadata table": {func(d *olevent.Dataset) {}, true},
		"storage layer says iceberg": {func(d *olevent.Dataset) {
			d.Facets = map[string]json.RawMessage{"storage": json.RawMessage(`{"storageLayer":"iceberg"}`)}
		}, true},
		"all_ table":                 {func(d *olevent.Dataset) { d.Symlinks[0].Name = "db.orders.all_manifests" }, true},
		"table called history":       {func(d *olevent.Dataset) { d.Symlinks[0].Name = "db.history" }, false},
		"location ends in history":   {func(d *olevent.Dataset) { d.Name = "/wh/a/b/history"; d.Symlinks[0].Name = "a.b.history" }, false},
		"branch is the table's data": {func(d *olevent.Dataset) { d.Symlinks[0].Name = "db.orders.branch_dev" }, false},
		"not iceberg": {func(d *olevent.Dataset) {
			d.Facets = map[string]json.RawMessage{"storage": json.RawMessage(`{"storageLayer":"delta"}`)}
		}, false},
	} {
		d := base
		d.Symlinks = append([]olevent.Identifier(nil), base.Symlinks...)
		c.mod(&d)
		if _, got := metadataTableOf(&d); got != c.want {
			t.Errorf("%s: metadata table = %v, want %v", name, got, c.want)
		}
	}

	// A job reading the snapshots table and the table itself: lineage of snapshot_id names the base identity (as
	// Spark does) and goes to the snapshots table; amount stays the base table's.
	snap := base
	snap.Symlinks = []olevent.Identifier{{Namespace: "file:/wh", Name: "db.orders.snapshots"}}
	snap.Schema = []olevent.SchemaField{{Path: "snapshot_id"}}
	plain := olevent.Dataset{Namespace: "file", Name: "/wh/db/orders", Schema: []olevent.SchemaField{{Path: "amount"}}}
	out := olevent.Dataset{Namespace: "file", Name: "/wh/out", ColumnLineage: &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{
		"s": {{Namespace: "file", Name: "/wh/db/orders", Field: "snapshot_id"}},
		"a": {{Namespace: "file", Name: "/wh/db/orders", Field: "amount"}}}}}
	ev := olevent.Event{Inputs: []olevent.Dataset{snap, plain}, Outputs: []olevent.Dataset{out}}
	ResolveMetadataTables(&ev)
	f := ev.Outputs[0].ColumnLineage.Fields
	if f["s"][0].Name != "db.orders.snapshots" || f["a"][0].Name != "/wh/db/orders" {
		t.Fatalf("column lineage %+v, want snapshot_id from db.orders.snapshots and amount from the table", f)
	}
	// Without the table's own read, every reference to the base identity is the metadata table's.
	ev = olevent.Event{Inputs: []olevent.Dataset{snap}, Outputs: []olevent.Dataset{{Namespace: "file", Name: "/wh/out", ColumnLineage: &olevent.ColumnLineage{
		Dataset: []olevent.InputField{{Namespace: "file", Name: "/wh/db/orders"}}}}}}
	ResolveMetadataTables(&ev)
	if got := ev.Outputs[0].ColumnLineage.Dataset[0]; got.Namespace != "file:/wh" || got.Name != "db.orders.snapshots" {
		t.Fatalf("dataset-level lineage %+v, want the snapshots table", got)
	}
}
