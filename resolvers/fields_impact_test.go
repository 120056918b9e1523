package resolvers

import (
	"testing"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// columnFixture: a.x -(j1 IDENTITY)-> b.y -(j2 AGGREGATION)-> c.z, a.x -(j1 FILTER)-> b.k -(j2 IDENTITY)-> c.w.
func columnFixture(fx *lineagetest.Fixture) {
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	j1, j2 := fx.Job("j1"), fx.Job("j2")
	fx.Flow(j1, []string{a}, []string{b})
	fx.Flow(j2, []string{b}, []string{c})
	ax, by, bk := fx.Field(a, "x", fx.T0, zero), fx.Field(b, "y", fx.T0, zero), fx.Field(b, "k", fx.T0, zero)
	cz, cw := fx.Field(c, "z", fx.T0, zero), fx.Field(c, "w", fx.T0, zero)
	fx.ColumnFeeds(ax, by, j1, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY"})
	fx.ColumnFeeds(by, cz, j2, lineagetest.Transform{Type: "DIRECT", Subtype: "AGGREGATION", Description: "sum(y)"})
	fx.ColumnFeeds(ax, bk, j1, lineagetest.Transform{Type: "INDIRECT", Subtype: "FILTER", Masking: false})
	fx.ColumnFeeds(bk, cw, j2, lineagetest.Transform{Type: "DIRECT", Subtype: "IDENTITY", Masking: true})
}

func TestFieldLineageAcrossTwoJobs(t *testing.T) {
	h := newHarness(t)
	columnFixture(h.fx)
	g := h.lineage(map[string]any{"start": fieldStart(h.fx.NS, "c", "z"), "dir": "UPSTREAM", "gran": "FIELD", "depth": 5})
	if !eq(g.names(), []string{"a.x", "b.y", "c.z"}) {
		t.Fatalf("nodes = %v", g.names())
	}
	byID := g.nameByID()
	if got := edgeNames(g.Edges, byID); !eq(got, []string{"a.x->b.y", "b.y->c.z"}) {
		t.Fatalf("edges = %v", got)
	}
	for _, e := range g.Edges {
		tr := e.Transformations
		if len(tr) != 1 || tr[0].Type != "DIRECT" || e.Job == nil {
			t.Fatalf("edge %s: transformations %+v job %v", byID[e.From]+"->"+byID[e.To], tr, e.Job)
		}
		if byID[e.To] == "c.z" && (tr[0].Subtype != "AGGREGATION" || tr[0].Description != "sum(y)" || e.Job.Name != "j2") {
			t.Fatalf("b.y->c.z transformation = %+v", tr[0])
		}
	}
}

func TestNoColumnLineageGap(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b := fx.Dataset("a"), fx.Dataset("b")
	fx.Flow(fx.Job("j"), []string{a}, []string{b})
	fx.Field(a, "x", fx.T0, zero)
	g := h.lineage(map[string]any{"start": fieldStart(fx.NS, "a", "x"), "dir": "DOWNSTREAM", "gran": "FIELD"})
	gaps := g.gapsOf("NO_COLUMN_LINEAGE")
	if len(gaps) != 1 || g.nameByID()[gaps[0].Nodes[0]] != "a.x" {
		t.Fatalf("NO_COLUMN_LINEAGE gaps = %+v (all %+v)", gaps, g.Gaps)
	}
}

func TestImpactDirectAndIndirect(t *testing.T) {
	h := newHarness(t)
	columnFixture(h.fx)
	var d struct {
		Impact struct {
			Direct []struct {
				Field struct {
					Path    string `json:"path"`
					Dataset struct {
						Name string `json:"name"`
					} `json:"dataset"`
				} `json:"field"`
				Distance int `json:"distance"`
				Path     []struct {
					From string `json:"from"`
				} `json:"path"`
			} `json:"direct"`
			Indirect []struct {
				Field struct {
					Path string `json:"path"`
				} `json:"field"`
				Distance int `json:"distance"`
			} `json:"indirect"`
			Jobs []struct {
				Name string `json:"name"`
			} `json:"jobs"`
			Truncated bool    `json:"truncated"`
			Gaps      []lgGap `json:"gaps"`
		} `json:"impact"`
	}
	h.mustQuery(`query($f: FieldRef!) { impact(field: $f) { direct { field { path dataset { name } } distance path { from } }
  indirect { field { path } distance } jobs { name } truncated gaps { kind } } }`,
		map[string]any{"f": map[string]any{"namespace": h.fx.NS, "name": "a", "field": "x"}}, &d)
	im := d.Impact
	var direct, indirect []string
	for _, f := range im.Direct {
		direct = append(direct, f.Field.Dataset.Name+"."+f.Field.Path)
		if len(f.Path) != f.Distance {
			t.Fatalf("path length %d != distance %d", len(f.Path), f.Distance)
		}
	}
	for _, f := range im.Indirect {
		indirect = append(indirect, f.Field.Path)
	}
	if !eq(direct, []string{"b.y", "c.z"}) || !eq(indirect, []string{"k", "w"}) {
		t.Fatalf("direct = %v indirect = %v", direct, indirect)
	}
	if len(im.Jobs) != 2 || im.Truncated {
		t.Fatalf("jobs = %+v truncated = %v", im.Jobs, im.Truncated)
	}
}

func TestEventStatus(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a := fx.Dataset("a")
	fx.Run("run-"+fx.NS, fx.Job("j"), []string{a}, nil, "", "START", "COMPLETE")
	fx.Quarantined("q-"+fx.NS, "runId is not a UUID")
	q := `query($id: ID!) { event(id: $id) { id state reason eventType } }`
	cases := map[string]string{"run-" + fx.NS + "-ev-1": "PROJECTED", "q-" + fx.NS: "QUARANTINED", "unknown-" + fx.NS: "PENDING"}
	for id, want := range cases {
		var d struct {
			Event struct {
				State  string  `json:"state"`
				Reason *string `json:"reason"`
			} `json:"event"`
		}
		h.mustQuery(q, map[string]any{"id": id}, &d)
		if d.Event.State != want {
			t.Fatalf("event %s: state %s, want %s", id, d.Event.State, want)
		}
		if (want == "QUARANTINED") != (d.Event.Reason != nil) {
			t.Fatalf("event %s: reason %v", id, d.Event.Reason)
		}
	}
}

func TestRunAnswersWhatItReadAndWrote(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	runID := "0190a8c4-0000-7000-8000-" + fx.NS[2:]
	fx.Run(runID, fx.Job("j"), []string{a}, []string{b, c}, "ATTEMPTED", "START", "FAIL")
	var d struct {
		Run struct {
			RunID  string                `json:"runId"`
			State  string                `json:"state"`
			Job    struct{ Name string } `json:"job"`
			Events []struct {
				EventType string `json:"eventType"`
			} `json:"events"`
			Inputs []struct {
				Dataset struct{ Name string } `json:"dataset"`
			} `json:"inputs"`
			Outputs []struct {
				Dataset     struct{ Name string } `json:"dataset"`
				Publication string                `json:"publication"`
				Version     string                `json:"version"`
			} `json:"outputs"`
		} `json:"run"`
	}
	h.mustQuery(`query($id: ID!) { run(id: $id) { runId state job { name } events { eventType }
  inputs { dataset { name } } outputs { dataset { name } publication version } } }`, map[string]any{"id": runID}, &d)
	r := d.Run
	if r.State != "FAIL" || r.Job.Name != "j" || len(r.Events) != 2 || r.Events[1].EventType != "FAIL" {
		t.Fatalf("run = %+v", r)
	}
	if len(r.Inputs) != 1 || r.Inputs[0].Dataset.Name != "a" || len(r.Outputs) != 2 {
		t.Fatalf("inputs %+v outputs %+v", r.Inputs, r.Outputs)
	}
	for _, o := range r.Outputs {
		if o.Publication != "ATTEMPTED" || o.Version != "snap-1" {
			t.Fatalf("output %+v, want ATTEMPTED snap-1", o)
		}
	}
	errs := h.query("", `query { run(id: "00000000-0000-0000-0000-000000000000") { runId } }`, nil, nil)
	if len(errs) != 1 || errs[0].code() != guard.CodeNotFound {
		t.Fatalf("unknown run: %+v", errs)
	}
}

func TestFieldLineageFromDatasetStartsAtEveryField(t *testing.T) {
	h := newHarness(t)
	columnFixture(h.fx)
	g := h.lineage(map[string]any{"start": dsStart(h.fx.NS, "b"), "dir": "DOWNSTREAM", "gran": "FIELD", "depth": 1})
	if !eq(g.names(), []string{"b", "b.k", "b.y", "c.w", "c.z"}) {
		t.Fatalf("nodes = %v, want b, its fields and their column neighbours", g.names())
	}
}
