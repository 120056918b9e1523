package resolvers

import (
	"testing"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// chain builds a -> j1 -> b -> j2 -> c.
func chain(fx *lineagetest.Fixture) (a, b, c string) {
	a, b, c = fx.Dataset("a"), fx.Dataset("b"), fx.Dataset("c")
	fx.Flow(fx.Job("j1"), []string{a}, []string{b})
	fx.Flow(fx.Job("j2"), []string{b}, []string{c})
	return a, b, c
}

func TestLineageDownstreamChain(t *testing.T) {
	h := newHarness(t)
	chain(h.fx)
	g := h.lineage(map[string]any{"start": dsStart(h.fx.NS, "a"), "dir": "DOWNSTREAM"})
	if !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("nodes = %v", g.names())
	}
	if got := edgeNames(g.Edges, g.nameByID()); !eq(got, []string{"a->b", "b->c"}) {
		t.Fatalf("edges = %v", got)
	}
	for _, e := range g.Edges {
		if e.Job == nil || len(e.Evidence) != 1 || e.Evidence[0].Kind != graph.KindObserved || e.Stale {
			t.Fatalf("edge %+v: want job, one OBSERVED evidence, not stale", e)
		}
	}
	if g.Truncated || g.Cursor != nil || g.PermissionsFiltered || len(g.Gaps) != 0 {
		t.Fatalf("want complete answer without gaps, got truncated=%v gaps=%+v", g.Truncated, g.Gaps)
	}
}

func TestLineageDepthCountsDatasetsNotJobs(t *testing.T) {
	h := newHarness(t)
	chain(h.fx)
	g := h.lineage(map[string]any{"start": dsStart(h.fx.NS, "a"), "dir": "DOWNSTREAM", "depth": 1})
	if !eq(g.names(), []string{"a", "b"}) {
		t.Fatalf("depth 1 nodes = %v, want a, b", g.names())
	}
	up := h.lineage(map[string]any{"start": dsStart(h.fx.NS, "c"), "dir": "UPSTREAM", "depth": 2})
	if !eq(up.names(), []string{"a", "b", "c"}) {
		t.Fatalf("upstream depth 2 nodes = %v", up.names())
	}
}

func TestLineageJobStartHasIOAtDepthOne(t *testing.T) {
	h := newHarness(t)
	chain(h.fx)
	g := h.lineage(map[string]any{"start": map[string]any{"job": map[string]any{"namespace": h.fx.NS, "name": "j1"}},
		"dir": "BOTH", "depth": 1})
	if !eq(g.names(), []string{"a", "b", "j1"}) {
		t.Fatalf("nodes = %v, want the job and its input and output only", g.names())
	}
	if got := edgeNames(g.Edges, g.nameByID()); !eq(got, []string{"a->j1", "j1->b"}) {
		t.Fatalf("edges = %v", got)
	}
}

func TestLineageUnknownStartIsNotFound(t *testing.T) {
	h := newHarness(t)
	errs := h.query("", lineageQuery, map[string]any{"start": dsStart(h.fx.NS, "nope"), "dir": "BOTH", "depth": 2}, nil)
	if len(errs) != 1 || errs[0].code() != guard.CodeNotFound {
		t.Fatalf("errors = %+v, want one NOT_FOUND", errs)
	}
}
