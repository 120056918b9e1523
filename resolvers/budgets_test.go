package resolvers

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// paged follows cursors until the answer is complete and returns every page.
func (h *harness) paged(vars map[string]any) []lineageGraph {
	h.t.Helper()
	var pages []lineageGraph
	for i := range 50 {
		g := h.lineage(vars)
		pages = append(pages, g)
		if g.Cursor == nil {
			if g.Truncated {
				h.t.Fatal("truncated page without a cursor")
			}
			return pages
		}
		if !g.Truncated || !g.hasGap("TRUNCATED") {
			h.t.Fatalf("page %d has a cursor but truncated=%v gaps=%+v", i, g.Truncated, g.Gaps)
		}
		for _, gap := range g.Gaps { // the typed reasons: on every TRUNCATED gap, on no other
			if (gap.Kind == "TRUNCATED") != (len(gap.StopReasons) > 0) {
				h.t.Fatalf("page %d: gap %s has stopReasons %v", i, gap.Kind, gap.StopReasons)
			}
		}
		vars["after"] = *g.Cursor
	}
	h.t.Fatal("more than 50 pages")
	return nil
}

// assertStopReason: the page's TRUNCATED gap gives reason among its typed stop reasons (Gap.stopReasons).
func assertStopReason(t *testing.T, g lineageGraph, reason string) {
	t.Helper()
	gap := g.gapsOf("TRUNCATED")
	if len(gap) != 1 || !slices.Contains(gap[0].StopReasons, reason) {
		t.Fatalf("TRUNCATED gap = %+v, want stop reason %s", gap, reason)
	}
}

// union merges pages, failing on a node or edge returned twice.
func union(t *testing.T, pages []lineageGraph) (nodes, edges []string) {
	t.Helper()
	byID := map[string]string{}
	for _, p := range pages {
		for id, n := range p.nameByID() {
			if _, dup := byID[id]; dup {
				t.Fatalf("node %s returned twice", n)
			}
			byID[id] = n
		}
	}
	seen := map[string]bool{}
	for _, p := range pages {
		for _, e := range p.Edges {
			if seen[e.ID] {
				t.Fatalf("edge %s->%s returned twice", byID[e.From], byID[e.To])
			}
			seen[e.ID] = true
		}
		edges = append(edges, edgeNames(p.Edges, byID)...)
	}
	for _, n := range byID {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	sort.Strings(edges)
	return nodes, edges
}

// fullAnswer is the same query without budgets getting in the way.
func (h *harness) fullAnswer(start map[string]any, dir string, depth int) (nodes, edges []string) {
	g := h.lineage(map[string]any{"start": start, "dir": dir, "depth": depth, "max": 5000})
	if g.Truncated {
		h.t.Fatal("reference answer truncated")
	}
	return union(h.t, []lineageGraph{g})
}

// tree: a -> {b, c}, b -> {d, e}, c -> {f, g}; each through its own job.
func tree(fx *lineagetest.Fixture) {
	ds := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		ds[n] = fx.Dataset(n)
	}
	fx.Flow(fx.Job("ja"), []string{ds["a"]}, []string{ds["b"], ds["c"]})
	fx.Flow(fx.Job("jb"), []string{ds["b"]}, []string{ds["d"], ds["e"]})
	fx.Flow(fx.Job("jc"), []string{ds["c"]}, []string{ds["f"], ds["g"]})
}

func assertPagesComplete(t *testing.T, h *harness, pages []lineageGraph, start map[string]any, dir string, depth int) {
	t.Helper()
	nodes, edges := union(t, pages)
	wantNodes, wantEdges := h.fullAnswer(start, dir, depth)
	if !eq(nodes, wantNodes) || !eq(edges, wantEdges) {
		t.Fatalf("pages give nodes %v edges %v; full answer %v %v", nodes, edges, wantNodes, wantEdges)
	}
}

func TestNodeBudgetPagesToFullAnswer(t *testing.T) {
	h := newHarness(t)
	tree(h.fx)
	start := dsStart(h.fx.NS, "a")
	pages := h.paged(map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 5, "max": 4})
	if len(pages) < 2 {
		t.Fatalf("want several pages with maxNodes 4, got %d", len(pages))
	}
	for i, p := range pages {
		if len(p.Nodes) > 4 {
			t.Fatalf("page %d has %d nodes > maxNodes", i, len(p.Nodes))
		}
	}
	assertStopReason(t, pages[0], "NODE_BUDGET")
	assertPagesComplete(t, h, pages, start, "DOWNSTREAM", 5)
}

func TestFanOutBudgetMarksAndContinues(t *testing.T) {
	h := newHarness(t, withConfig(lineage.Config{FanOut: 2}))
	fx := h.fx
	var outs []string
	for i := range 5 {
		outs = append(outs, fx.Dataset(fmt.Sprintf("o%d", i)))
	}
	fx.Flow(fx.Job("j"), []string{fx.Dataset("hub")}, outs)
	start := dsStart(fx.NS, "hub")
	pages := h.paged(map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 2})
	if len(pages) != 3 {
		t.Fatalf("pages = %d, want 3 (2 + 2 + 1 neighbours)", len(pages))
	}
	m := pages[0].FanOutMarkers
	if len(m) != 1 || m[0].Shown != 2 || m[0].Direction != "DOWNSTREAM" || pages[0].nameByID()[m[0].Node] != "hub" {
		t.Fatalf("first page markers = %+v", m)
	}
	if m := pages[1].FanOutMarkers; len(m) != 1 || m[0].Shown != 4 {
		t.Fatalf("second page markers = %+v", m)
	}
	assertStopReason(t, pages[0], "FAN_OUT")
	nodes, edges := union(t, pages)
	if !eq(nodes, []string{"hub", "o0", "o1", "o2", "o3", "o4"}) || len(edges) != 5 {
		t.Fatalf("pages give %v %v, want hub and its 5 outputs", nodes, edges)
	}
}

func longChain(fx *lineagetest.Fixture, n int) {
	prev := fx.Dataset("d00")
	for i := 1; i < n; i++ {
		next := fx.Dataset(fmt.Sprintf("d%02d", i))
		fx.Flow(fx.Job(fmt.Sprintf("j%02d", i)), []string{prev}, []string{next})
		prev = next
	}
}

func TestDepthAboveCapIsClampedPerPage(t *testing.T) {
	h := newHarness(t)
	longChain(h.fx, 23)
	start := dsStart(h.fx.NS, "d00")
	pages := h.paged(map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 25})
	if len(pages) != 2 || len(pages[0].Nodes) != lineage.DefaultMaxDepth+1 {
		t.Fatalf("pages = %d, first has %d nodes; want the first page clamped to %d hops", len(pages), len(pages[0].Nodes), lineage.DefaultMaxDepth)
	}
	if !pages[0].Truncated || !strings.Contains(pages[0].gapsOf("TRUNCATED")[0].Message, "depth cap") {
		t.Fatalf("first page gaps = %+v, want TRUNCATED by the depth cap", pages[0].Gaps)
	}
	assertStopReason(t, pages[0], "DEPTH_CAP")
	nodes, edges := union(t, pages)
	if len(nodes) != 23 || len(edges) != 22 || nodes[22] != "d22" {
		t.Fatalf("over all pages: %d nodes %d edges, want the whole chain of 23", len(nodes), len(edges))
	}
}

func TestDeadlineReturnsPartialWithCursor(t *testing.T) {
	// A clock that advances one second per reading makes every page stop at its first deadline check.
	var ticks atomic.Int64
	base := time.Now().UTC()
	clock := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * time.Second) }
	h := newHarness(t, withClock(clock), withConfig(lineage.Config{Deadline: 1500 * time.Millisecond}))
	longChain(h.fx, 5)
	start := dsStart(h.fx.NS, "d00")
	asOf := base.Add(time.Hour).Format(time.RFC3339Nano)
	pages := h.paged(map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 10, "asOf": asOf})
	if len(pages) < 2 {
		t.Fatalf("pages = %d, want the deadline to split the walk", len(pages))
	}
	if gap := pages[0].gapsOf("TRUNCATED"); len(gap) != 1 || !strings.Contains(gap[0].Message, "deadline") {
		t.Fatalf("first page gaps = %+v, want a TRUNCATED gap naming the deadline", pages[0].Gaps)
	}
	assertStopReason(t, pages[0], "DEADLINE")
	nodes, edges := union(t, pages)
	if len(nodes) != 5 || len(edges) != 4 {
		t.Fatalf("pages give %v %v, want the whole chain", nodes, edges)
	}
}

func TestCursorBoundToPrincipalAndArguments(t *testing.T) {
	h := newHarness(t)
	tree(h.fx)
	vars := map[string]any{"start": dsStart(h.fx.NS, "a"), "dir": "DOWNSTREAM", "depth": 5, "max": 3}
	g := h.lineage(vars)
	if g.Cursor == nil {
		t.Fatal("want a cursor")
	}
	try := func(principal string, change map[string]any) []gqlError {
		v := map[string]any{"after": *g.Cursor}
		maps.Copy(v, vars)
		maps.Copy(v, change)
		return h.query(principal, lineageQuery, v, nil)
	}
	for name, c := range map[string]struct {
		principal string
		change    map[string]any
	}{
		"other principal": {"mallory", nil},
		"changed depth":   {"", map[string]any{"depth": 4}},
		"changed start":   {"", map[string]any{"start": dsStart(h.fx.NS, "b")}},
		"tampered":        {"", map[string]any{"after": *g.Cursor + "x"}},
	} {
		errs := try(c.principal, c.change)
		if len(errs) != 1 || errs[0].code() != guard.CodeBadRequest {
			t.Fatalf("%s: errors = %+v, want BAD_REQUEST", name, errs)
		}
	}
	if errs := try("", nil); len(errs) != 0 {
		t.Fatalf("same principal and arguments: %+v", errs)
	}
}
