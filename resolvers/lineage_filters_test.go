package resolvers

import (
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

func TestFailedOutputHiddenUnlessIncludeAttempted(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b := fx.Dataset("a"), fx.Dataset("b")
	j := fx.Job("j")
	fx.Input(a, j, lineagetest.Leg{RunState: "FAIL"})
	fx.Output(j, b, lineagetest.Leg{RunState: "FAIL", Intervals: []lineagetest.Span{{From: fx.T0, Pub: graph.PubAttempted}}})

	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	if !eq(g.names(), []string{"a"}) || len(g.Edges) != 0 {
		t.Fatalf("default: nodes = %v edges = %d, want the FAIL output hidden", g.names(), len(g.Edges))
	}
	g = h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM", "att": true})
	if !eq(g.names(), []string{"a", "b"}) || len(g.Edges) != 1 {
		t.Fatalf("includeAttempted: nodes = %v", g.names())
	}
	if ev := g.Edges[0].Evidence[0]; ev.Publication != graph.PubAttempted || ev.RunState != "FAIL" {
		t.Fatalf("evidence = %+v, want ATTEMPTED by a FAIL run", ev)
	}
}

func TestAsOfBeforeRenameAnswersOldIdentity(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b := fx.Dataset("a"), fx.Dataset("old_b")
	fx.Flow(fx.Job("j"), []string{a}, []string{b})
	renamedAt := fx.Now.Add(-10 * 24 * time.Hour)
	fx.Rename(b, "old_b", "new_b", renamedAt)
	before := fx.Now.Add(-20 * 24 * time.Hour).Format(time.RFC3339Nano)

	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM", "asOf": before})
	if !eq(g.names(), []string{"a", "old_b"}) {
		t.Fatalf("asOf before rename: nodes = %v, want the old name", g.names())
	}
	now := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	if !eq(now.names(), []string{"a", "new_b"}) {
		t.Fatalf("now: nodes = %v, want the new name", now.names())
	}
	if g.Nodes[1].ID != now.Nodes[1].ID && g.Nodes[0].ID != now.Nodes[1].ID {
		t.Fatalf("ids must survive the rename: %v vs %v", g.Nodes, now.Nodes)
	}

	var byOld struct {
		Lineage struct {
			Nodes []struct {
				Name         string `json:"name"`
				ResolvedFrom *struct {
					Name string `json:"name"`
				} `json:"resolvedFrom"`
			} `json:"nodes"`
		} `json:"lineage"`
	}
	h.mustQuery(`query($s: NodeRef!) { lineage(start: $s, direction: UPSTREAM, depth: 1) {
  nodes { ... on Dataset { name resolvedFrom { name } } } } }`, map[string]any{"s": dsStart(fx.NS, "old_b")}, &byOld)
	if n := byOld.Lineage.Nodes; len(n) != 2 || n[0].Name != "new_b" || n[0].ResolvedFrom == nil || n[0].ResolvedFrom.Name != "old_b" {
		t.Fatalf("lineage by old name: %+v, want start new_b resolved from old_b", n)
	}

	var d struct {
		Dataset struct {
			ID           string `json:"id"`
			Name         string `json:"name"`
			CurrentName  string `json:"currentName"`
			ResolvedFrom *struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"resolvedFrom"`
		} `json:"dataset"`
	}
	q := `query($ns: String!, $n: String!, $asOf: Time) { dataset(namespace: $ns, name: $n, asOf: $asOf) {
  id name currentName resolvedFrom { name kind } } }`
	h.mustQuery(q, map[string]any{"ns": fx.NS, "n": "old_b"}, &d)
	if d.Dataset.Name != "new_b" || d.Dataset.ResolvedFrom == nil || d.Dataset.ResolvedFrom.Kind != graph.NameRenamed ||
		d.Dataset.ResolvedFrom.Name != "old_b" {
		t.Fatalf("old name now: %+v, want new_b resolved from RENAMED old_b", d.Dataset)
	}
	h.mustQuery(q, map[string]any{"ns": fx.NS, "n": "new_b", "asOf": before}, &d)
	if d.Dataset.Name != "old_b" || d.Dataset.CurrentName != "new_b" {
		t.Fatalf("new name asOf before rename: %+v, want named old_b then", d.Dataset)
	}
}

func TestAsOfBeforeColumnDropShowsIt(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a := fx.Dataset("a")
	fx.Field(a, "kept", fx.T0, time.Time{})
	fx.Field(a, "dropped", fx.T0, fx.Now.Add(-5*24*time.Hour))
	q := `query($ns: String!, $asOf: Time) { dataset(namespace: $ns, name: "a") { fields(asOf: $asOf) { path validTo } } }`
	var d struct {
		Dataset struct {
			Fields []struct {
				Path    string  `json:"path"`
				ValidTo *string `json:"validTo"`
			} `json:"fields"`
		} `json:"dataset"`
	}
	h.mustQuery(q, map[string]any{"ns": fx.NS, "asOf": fx.Now.Add(-10 * 24 * time.Hour).Format(time.RFC3339)}, &d)
	if len(d.Dataset.Fields) != 2 || d.Dataset.Fields[0].Path != "dropped" || d.Dataset.Fields[0].ValidTo == nil {
		t.Fatalf("before the drop: %+v, want dropped (closed) and kept", d.Dataset.Fields)
	}
	h.mustQuery(q, map[string]any{"ns": fx.NS}, &d)
	if len(d.Dataset.Fields) != 1 || d.Dataset.Fields[0].Path != "kept" {
		t.Fatalf("now: %+v, want kept only", d.Dataset.Fields)
	}
}

func TestDeclaredOnlyEdgesAreLabelled(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	j := fx.Job("j")
	fx.Input(a, j, lineagetest.Leg{Kind: graph.KindDeclared})
	fx.Output(j, b, lineagetest.Leg{Kind: graph.KindDeclared})
	fx.Declared(b, c)

	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	if !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("nodes = %v", g.names())
	}
	for _, e := range g.Edges {
		if len(e.Evidence) != 1 || e.Evidence[0].Kind != graph.KindDeclared {
			t.Fatalf("edge %+v: want one DECLARED evidence", e)
		}
	}
	if gaps := g.gapsOf("DECLARED_ONLY"); len(gaps) != 2 {
		t.Fatalf("DECLARED_ONLY gaps = %+v, want one per edge", gaps)
	}
	obs := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM", "ev": []string{"OBSERVED"}})
	if !eq(obs.names(), []string{"a"}) {
		t.Fatalf("evidence OBSERVED: nodes = %v, want declared edges filtered out", obs.names())
	}
}

func TestObservedAndDeclaredEvidenceAreNotMerged(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b := fx.Dataset("a"), fx.Dataset("b")
	j := fx.Job("j")
	fx.Flow(j, []string{a}, []string{b})
	fx.Input(a, j, lineagetest.Leg{Kind: graph.KindDeclared})
	fx.Output(j, b, lineagetest.Leg{Kind: graph.KindDeclared})
	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	if len(g.Edges) != 1 || len(g.Edges[0].Evidence) != 2 || g.Edges[0].Evidence[0].Kind != "OBSERVED" ||
		g.Edges[0].Evidence[1].Kind != "DECLARED" || g.hasGap("DECLARED_ONLY") {
		t.Fatalf("edges = %+v gaps = %+v, want one edge with OBSERVED and DECLARED evidence", g.Edges, g.Gaps)
	}
}

func TestStaleAndRunWithoutTerminalGaps(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	old := fx.Now.Add(-5 * 24 * time.Hour)
	j1 := fx.Job("j1")
	fx.Input(a, j1, lineagetest.Leg{LastObserved: old})
	fx.Output(j1, b, lineagetest.Leg{LastObserved: old})
	j2 := fx.Job("j2")
	fx.Input(b, j2, lineagetest.Leg{RunState: "RUNNING"})
	fx.Output(j2, c, lineagetest.Leg{RunState: "RUNNING"})

	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	byID := g.nameByID()
	stale := g.gapsOf("STALE_EDGE")
	if len(stale) != 1 || byID[stale[0].Nodes[0]] != "a" || byID[stale[0].Nodes[1]] != "b" {
		t.Fatalf("STALE_EDGE gaps = %+v, want a->b", stale)
	}
	rwt := g.gapsOf("RUN_WITHOUT_TERMINAL")
	if len(rwt) != 1 || byID[rwt[0].Nodes[0]] != "b" {
		t.Fatalf("RUN_WITHOUT_TERMINAL gaps = %+v, want b->c", rwt)
	}
	for _, e := range g.Edges {
		if e.Stale != (byID[e.From] == "a") {
			t.Fatalf("edge %s->%s stale = %v", byID[e.From], byID[e.To], e.Stale)
		}
	}
}

func TestUnresolvedIdentityGap(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	chain(fx)
	fx.Unresolved(fx.NS, "b", "symlink binds to two datasets")
	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "DOWNSTREAM"})
	gaps := g.gapsOf("UNRESOLVED_IDENTITY")
	if len(gaps) != 1 || len(gaps[0].Nodes) != 1 || g.nameByID()[gaps[0].Nodes[0]] != "b" {
		t.Fatalf("UNRESOLVED_IDENTITY gaps = %+v, want one naming b", gaps)
	}
}

func TestCycleIsWalkedOnce(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	a, b, c := fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	fx.Flow(fx.Job("j1"), []string{a}, []string{b})
	fx.Flow(fx.Job("j2"), []string{b}, []string{c})
	fx.Flow(fx.Job("j3"), []string{c}, []string{a})
	g := h.lineage(map[string]any{"start": dsStart(fx.NS, "a"), "dir": "BOTH", "depth": 10})
	if !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("nodes = %v", g.names())
	}
	if got := edgeNames(g.Edges, g.nameByID()); !eq(got, []string{"a->b", "b->c", "c->a"}) {
		t.Fatalf("edges = %v, want each edge once", got)
	}
	if g.Truncated {
		t.Fatal("a cycle must not look truncated")
	}
}
