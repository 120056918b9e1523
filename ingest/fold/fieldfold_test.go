package fold

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func schemaObs(t int64, paths ...string) Obs {
	o := Obs{T: t, Event: fmt.Sprint("s", t), Kind: ObsSchema}
	for _, p := range paths {
		id := ""
		if i := strings.Index(p, "#"); i > 0 {
			p, id = p[:i], p[i+1:]
		}
		o.Fields = append(o.Fields, olevent.SchemaField{Path: p, Type: "string", FieldID: id})
	}
	return o
}

func read(o Obs) Obs {
	o.R = true
	return o
}

// span renders a history's path and interval: path[from,to), "open" for an open end.
func span(h *FieldHist) string {
	to := fmt.Sprint(h.To)
	if h.To == graph.OpenEnd {
		to = "open"
	}
	return fmt.Sprintf("%s[%d,%s)", h.Path, h.From, to)
}

func renderHists(hs []*FieldHist) string {
	var parts []string
	for _, h := range hs {
		r := ""
		if h.Read {
			r = "r"
		}
		parts = append(parts, span(h)+r)
	}
	return strings.Join(parts, " ")
}

func TestFieldHistories(t *testing.T) {
	cases := []struct {
		name string
		log  []Obs
		want string
	}{
		{"stable schema", []Obs{schemaObs(10, "a", "b"), schemaObs(20, "a", "b")}, "a[10,open) b[10,open)"},
		{"omitted field closes", []Obs{schemaObs(10, "a", "b"), schemaObs(20, "a")}, "a[10,open) b[10,20)"},
		{"re-created field is a new history", []Obs{schemaObs(10, "a", "b"), schemaObs(20, "a"), schemaObs(30, "a", "b")},
			"a[10,open) b[10,20) b[30,open)"},
		{"stable field id reopens the same history",
			[]Obs{schemaObs(10, "a", "b#7"), schemaObs(20, "a"), schemaObs(30, "a", "b#7")}, "a[10,open) b[10,open)"},
		{"drop closes everything, create starts over", []Obs{schemaObs(10, "a"),
			{T: 20, Event: "d", Kind: ObsLife, State: LifeDrop}, {T: 30, Event: "c", Kind: ObsLife, State: LifeCreate},
			schemaObs(30, "a")}, "a[10,20) a[30,open)"},
		{"mention opens without closing", []Obs{schemaObs(10, "a"), {T: 15, Event: "m", Kind: ObsMention,
			Paths: []string{"z"}}}, "a[10,open) z[15,open)"},
		{"late schema between two splits a history", []Obs{schemaObs(30, "a", "b"), schemaObs(10, "a", "b"),
			schemaObs(20, "a")}, "a[10,open) b[10,20) b[30,open)"},
		// Observed on read (ADR 0018): what readers saw is kept for paths no owner reported, labelled, and never
		// opens, closes or replaces an owner's field.
		{"a source nobody writes keeps its readers' schema", []Obs{read(schemaObs(10, "a", "b")),
			read(schemaObs(20, "a"))}, "a[10,open)r b[10,20)r"},
		{"a reader's schema does not close an owner's field", []Obs{schemaObs(10, "a", "b"),
			read(schemaObs(20, "a"))}, "a[10,open) b[10,open)"},
		{"a reader's field beside the owners' is labelled", []Obs{schemaObs(10, "a"),
			read(schemaObs(20, "a", "injected"))}, "a[10,open) injected[20,open)r"},
		{"a reader's mention does not reopen an owner's field", []Obs{schemaObs(10, "a", "b"), schemaObs(20, "a"),
			read(Obs{T: 30, Event: "m", Kind: ObsMention, Paths: []string{"b", "z"}})}, "a[10,open) b[10,20) z[30,open)r"},
		{"an owner's schema closes what readers saw", []Obs{read(schemaObs(10, "a", "b")), schemaObs(20, "a"),
			read(schemaObs(30, "a", "b"))}, "a[20,open) b[10,20)r b[30,open)r"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderHists(FieldHistories(nil, tc.log, nil)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// renderNamed renders histories with their keys' paths and renames: path[from,to) key=<start path> names.
func renderNamed(hs []*FieldHist) string {
	var parts []string
	for _, h := range hs {
		s := span(h) + "#" + h.FieldID
		if len(h.Names) > 0 {
			var ns []string
			for _, n := range h.Names {
				ns = append(ns, fmt.Sprintf("%s@%d", n.P, n.F))
			}
			s += "{" + strings.Join(ns, ",") + "}"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Projection version 5 (ADR 0041): a stable field id (Iceberg's field-id) is the field's identity. A rename keeps
// the history (same key: the path it started under) with the new name from the schema that renamed it; the same
// name under a new id is a new history; names swapped between two fields swap.
func TestFieldHistoriesFollowStableFieldIDs(t *testing.T) {
	cases := []struct {
		name string
		log  []Obs
		want string
	}{
		{"rename keeps the field", []Obs{schemaObs(10, "a#1", "b#2"), schemaObs(20, "a#1", "c#2")},
			"a[10,open)#1 c[10,open)#2{b@10,c@20}"},
		{"rename and back", []Obs{schemaObs(10, "b#2"), schemaObs(20, "c#2"), schemaObs(30, "b#2")},
			"b[10,open)#2{b@10,c@20,b@30}"},
		{"same name, new id: a new field", []Obs{schemaObs(10, "a#1", "b#2"), schemaObs(20, "a#1", "b#3")},
			"a[10,open)#1 b[10,20)#2 b[20,open)#3"},
		{"swapped names swap", []Obs{schemaObs(10, "a#1", "b#2"), schemaObs(20, "b#1", "a#2")},
			"a[10,open)#2{b@10,a@20} b[10,open)#1{a@10,b@20}"},
		{"rename onto a dropped field's name", []Obs{schemaObs(10, "a#1", "b#2"), schemaObs(20, "a#2")},
			"a[10,20)#1 a[10,open)#2{b@10,a@20}"},
		{"without ids a rename is a new field", []Obs{schemaObs(10, "a", "b"), schemaObs(20, "a", "c")},
			"a[10,open)# b[10,20)# c[20,open)#"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := FieldHistories(nil, c.log, nil)
			if got := renderNamed(hs); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			for _, h := range hs {
				if len(h.Names) > 0 && h.Key("ds") != graph.FieldKey("ds", h.Names[0].P, h.From) {
					t.Errorf("%s: key %s, want the key of the path it started under", h.Path, h.Key("ds"))
				}
				if len(h.Names) > 0 && h.PathAt(h.Names[1].F-1) != h.Names[0].P {
					t.Errorf("%s: pathAt before the rename is %s", h.Path, h.PathAt(h.Names[1].F-1))
				}
			}
		})
	}
	// fieldAt resolves a name at a time onto the history that had it then.
	hs := FieldHistories(nil, []Obs{schemaObs(10, "b#2"), schemaObs(20, "c#2")}, nil)
	if h := FieldAt(hs, "b", 15); h == nil || h.FieldID != "2" {
		t.Errorf("fieldAt(b, 15) = %v", h)
	}
	if h := FieldAt(hs, "c", 25); h == nil || h.FieldID != "2" {
		t.Errorf("fieldAt(c, 25) = %v", h)
	}
}
