package fold

import (
	"testing"

	"github.com/headwater-data/headwater/graph"
)

// ResolveField (ADR 0065): through the snapshot's schema a reference lands on the field id's history whatever it
// is called at the event's time; without a schema, or for a path it lacks, on the name at that time.
func TestResolveFieldThroughTheSnapshotSchema(t *testing.T) {
	renamed := &FieldHist{Path: "customer_name", FieldID: "2", From: 10, To: graph.OpenEnd,
		Names: []FieldName{{P: "customer", F: 10}, {P: "customer_name", F: 20}}}
	dropped := &FieldHist{Path: "amount", FieldID: "3", From: 10, To: 30}
	readded := &FieldHist{Path: "amount", FieldID: "6", From: 30, To: graph.OpenEnd}
	swappedA := &FieldHist{Path: "a", FieldID: "7", From: 10, To: graph.OpenEnd, Names: []FieldName{{P: "b", F: 10}, {P: "a", F: 20}}}
	swappedB := &FieldHist{Path: "b", FieldID: "8", From: 10, To: graph.OpenEnd, Names: []FieldName{{P: "a", F: 10}, {P: "b", F: 20}}}
	hists := []*FieldHist{renamed, dropped, readded, swappedA, swappedB}
	schema0 := map[string]string{"customer": "2", "amount": "3", "b": "7", "a": "8"}
	schema2 := map[string]string{"customer_name": "2", "amount": "6", "a": "7", "b": "8"}
	for _, c := range []struct {
		name   string
		schema map[string]string
		path   string
		at     int64
		want   *FieldHist
	}{
		{"old name, old snapshot, before the rename", schema0, "customer", 15, renamed},
		{"old name, old snapshot, after the rename", schema0, "customer", 25, renamed},
		{"new name, new snapshot", schema2, "customer_name", 25, renamed},
		{"re-added name, old snapshot, after the re-add: the dropped field", schema0, "amount", 40, dropped},
		{"re-added name, new snapshot", schema2, "amount", 40, readded},
		{"re-added name, no schema: the name at the time", nil, "amount", 40, readded},
		{"swapped names, old snapshot read after the swap", schema0, "a", 25, swappedB},
		{"swapped names, no schema: the name at the time", nil, "a", 25, swappedA},
		{"a path the schema lacks: the name at the time", schema0, "customer_name", 25, renamed},
		{"a field id no history has: the name at the time", map[string]string{"amount": "99"}, "amount", 40, readded},
	} {
		if got := ResolveField(hists, c.schema, c.path, c.at); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// FoldColumns resolves an output's reference through the WROTE row's schema and an input's through the READ row's.
func TestFoldColumnsResolvesThroughTheRowsSchemas(t *testing.T) {
	dropped := &FieldHist{Path: "amount", FieldID: "3", From: 10, To: 30}
	readded := &FieldHist{Path: "amount", FieldID: "6", From: 30, To: graph.OpenEnd}
	total := &FieldHist{Path: "total", From: 10, To: graph.OpenEnd}
	hists := map[string][]*FieldHist{"orders": {dropped, readded}, "report": {total}}
	run := func(schema map[string]string) []Run {
		return []Run{{ID: "r1", State: "COMPLETE", Start: 40, Ended: 41, Last: 41, IO: []IO{
			{Dir: graph.RelRead, DS: "orders", FirstAt: 40, Version: "s1", Schema: schema},
			{Dir: graph.RelWrote, DS: "report", FirstAt: 40, Cols: &ColsDoc{Fields: []ColField{{In: "orders", InField: "amount", Out: "total", FirstAt: 40}}}},
		}}}
	}
	for _, c := range []struct {
		schema map[string]string
		want   string
	}{{map[string]string{"amount": "3"}, dropped.Key("orders")}, {nil, readded.Key("orders")}} {
		aggs := FoldColumns(nil, run(c.schema), hists)
		if len(aggs) != 1 {
			t.Fatalf("%d column aggregates", len(aggs))
		}
		for _, a := range aggs {
			if a.From != c.want || a.To != total.Key("report") {
				t.Errorf("schema %v: edge %s -> %s, want %s -> %s", c.schema, a.From, a.To, c.want, total.Key("report"))
			}
		}
	}
}
