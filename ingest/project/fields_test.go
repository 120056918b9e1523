package project

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func schemaObs(t int64, paths ...string) dsObs {
	o := dsObs{T: t, Event: fmt.Sprint("s", t), Kind: obsSchema}
	for _, p := range paths {
		id := ""
		if i := strings.Index(p, "#"); i > 0 {
			p, id = p[:i], p[i+1:]
		}
		o.Fields = append(o.Fields, olevent.SchemaField{Path: p, Type: "string", FieldID: id})
	}
	return o
}

func read(o dsObs) dsObs {
	o.R = true
	return o
}

func renderHists(hs []*fieldHist) string {
	var parts []string
	for _, h := range hs {
		to := fmt.Sprint(h.To)
		if h.To == graph.OpenEnd {
			to = "open"
		}
		r := ""
		if h.Read {
			r = "r"
		}
		parts = append(parts, fmt.Sprintf("%s[%d,%s)%s", h.Path, h.From, to, r))
	}
	return strings.Join(parts, " ")
}

func TestFieldHistories(t *testing.T) {
	cases := []struct {
		name string
		log  []dsObs
		want string
	}{
		{"stable schema", []dsObs{schemaObs(10, "a", "b"), schemaObs(20, "a", "b")}, "a[10,open) b[10,open)"},
		{"omitted field closes", []dsObs{schemaObs(10, "a", "b"), schemaObs(20, "a")}, "a[10,open) b[10,20)"},
		{"re-created field is a new history", []dsObs{schemaObs(10, "a", "b"), schemaObs(20, "a"), schemaObs(30, "a", "b")},
			"a[10,open) b[10,20) b[30,open)"},
		{"stable field id reopens the same history",
			[]dsObs{schemaObs(10, "a", "b#7"), schemaObs(20, "a"), schemaObs(30, "a", "b#7")}, "a[10,open) b[10,open)"},
		{"drop closes everything, create starts over", []dsObs{schemaObs(10, "a"),
			{T: 20, Event: "d", Kind: obsLife, State: lcDrop}, {T: 30, Event: "c", Kind: obsLife, State: lcCreate},
			schemaObs(30, "a")}, "a[10,20) a[30,open)"},
		{"mention opens without closing", []dsObs{schemaObs(10, "a"), {T: 15, Event: "m", Kind: obsMention,
			Paths: []string{"z"}}}, "a[10,open) z[15,open)"},
		{"late schema between two splits a history", []dsObs{schemaObs(30, "a", "b"), schemaObs(10, "a", "b"),
			schemaObs(20, "a")}, "a[10,open) b[10,20) b[30,open)"},
		// Observed on read (ADR 0018): what readers saw is kept for paths no owner reported, labelled, and never
		// opens, closes or replaces an owner's field.
		{"a source nobody writes keeps its readers' schema", []dsObs{read(schemaObs(10, "a", "b")),
			read(schemaObs(20, "a"))}, "a[10,open)r b[10,20)r"},
		{"a reader's schema does not close an owner's field", []dsObs{schemaObs(10, "a", "b"),
			read(schemaObs(20, "a"))}, "a[10,open) b[10,open)"},
		{"a reader's field beside the owners' is labelled", []dsObs{schemaObs(10, "a"),
			read(schemaObs(20, "a", "injected"))}, "a[10,open) injected[20,open)r"},
		{"a reader's mention does not reopen an owner's field", []dsObs{schemaObs(10, "a", "b"), schemaObs(20, "a"),
			read(dsObs{T: 30, Event: "m", Kind: obsMention, Paths: []string{"b", "z"}})}, "a[10,open) b[10,20) z[30,open)r"},
		{"an owner's schema closes what readers saw", []dsObs{read(schemaObs(10, "a", "b")), schemaObs(20, "a"),
			read(schemaObs(30, "a", "b"))}, "a[20,open) b[10,20)r b[30,open)r"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderHists(fieldHistories(tc.log, nil)); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
