package lineage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// The walk tested where it lives: an in-memory NeighborReader, no servers. Each case pages through a walk the way
// Service.Lineage does (the continuation of a page starts the next) and checks every page's nodes, its typed stop
// reasons and the TRUNCATED gap. The GraphQL tests in package resolvers check the same behaviours once each
// through the API (the contract).

// walkCase is one walk from start over edges, with the page budgets of a request.
type walkCase struct {
	name     string
	edges    []string
	start    string
	down     bool
	depth    int
	maxNodes int
	fanOut   int
	maxHops  int
	// pages are the datasets each page returns, in the order found; stops the stop reasons of each page.
	pages [][]string
	stops [][]api.StopReason
}

func TestWalkBudgetsAndPaging(t *testing.T) {
	chain := func(n int) []string {
		var e []string
		for i := range n {
			e = append(e, fmt.Sprintf("c%02d>c%02d", i, i+1))
		}
		return e
	}
	star := func(hub string, n int, prefix string) []string {
		var e []string
		for i := range n {
			e = append(e, fmt.Sprintf("%s>%s%d", hub, prefix, i))
		}
		return e
	}
	cases := []walkCase{
		{name: "depth limits a complete answer", edges: chain(5), start: "c00", down: true, depth: 3,
			pages: [][]string{{"c00", "c01", "c02", "c03"}}, stops: [][]api.StopReason{nil}},
		{name: "upstream walks against the data flow", edges: chain(5), start: "c04", depth: 2,
			pages: [][]string{{"c04", "c03", "c02"}}, stops: [][]api.StopReason{nil}},
		{name: "the hop cap per page pages a deep request", edges: chain(7), start: "c00", down: true, depth: 7, maxHops: 3,
			pages: [][]string{{"c00", "c01", "c02", "c03"}, {"c04", "c05", "c06"}, {"c07"}},
			stops: [][]api.StopReason{{api.StopDepthCap}, {api.StopDepthCap}, nil}},
		{name: "the node budget stops a page between entries", edges: append(star("hub", 3, "a"), "a0>x", "a1>y"),
			start: "hub", down: true, depth: 2, maxNodes: 4,
			pages: [][]string{{"hub", "a0", "a1", "a2"}, {"x", "y"}},
			stops: [][]api.StopReason{{api.StopNodeBudget}, nil}},
		{name: "fan-out shows a hub's neighbours over pages, level by level", edges: append(star("hub", 5, "n"), "n0>deep"),
			start: "hub", down: true, depth: 2, fanOut: 2,
			pages: [][]string{{"hub", "n0", "n1"}, {"n2", "n3"}, {"n4", "deep"}},
			stops: [][]api.StopReason{{api.StopFanOut}, {api.StopFanOut}, nil}},
		{name: "a node reached at two depths is expanded once, at the shortest",
			edges: []string{"s>a", "s>b", "a>b", "b>c"}, start: "s", down: true, depth: 2,
			pages: [][]string{{"s", "a", "b", "c"}}, stops: [][]api.StopReason{nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newMemReader(c.edges...)
			got, stops := pageThrough(t, r, c, fixedClock(), 10)
			if !slices.EqualFunc(got, c.pages, slices.Equal) {
				t.Fatalf("pages = %v, want %v", got, c.pages)
			}
			if !slices.EqualFunc(stops, c.stops, slices.Equal) {
				t.Fatalf("stop reasons = %v, want %v", stops, c.stops)
			}
		})
	}
}

// TestWalkDeadline: a page whose time budget runs out between hops stops there with DEADLINE (the typed reason
// caching decides on), says so in the gap's words, and its continuation returns the rest.
func TestWalkDeadline(t *testing.T) {
	r := newMemReader("c0>c1", "c1>c2", "c2>c3")
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r.advance = func() { now = now.Add(3 * time.Second) } // every read takes 3 s of the 5 s budget
	c := walkCase{start: "c0", down: true, depth: 3}
	pages, stops := pageThrough(t, r, c, func() time.Time { return now }, 5)
	if !slices.Equal(pages[0], []string{"c0", "c1", "c2"}) {
		t.Fatalf("first page = %v, want the two hops read within the deadline", pages[0])
	}
	if !slices.Contains(stops[0], api.StopDeadline) {
		t.Fatalf("first page stop reasons = %v, want DEADLINE", stops[0])
	}
	if all := slices.Concat(pages...); !slices.Equal(all, []string{"c0", "c1", "c2", "c3"}) {
		t.Fatalf("pages = %v: the continuations lost or repeated nodes", pages)
	}
}

// TestTruncatedGapCarriesTypedReasons: the TRUNCATED gap lists each distinct reason once, in the order first
// reached, beside the unchanged message.
func TestTruncatedGapCarriesTypedReasons(t *testing.T) {
	w := &walk{}
	w.stops.add(api.StopFanOut, "fan-out budget of 2 per node")
	w.stops.add(api.StopFanOut, "fan-out budget of 2 per node")
	w.stops.add(api.StopNodeBudget, "node budget of 3 per page")
	w.truncatedGap([]frontierEntry{{Key: "k", Kind: HopDataset}})
	g := w.gaps.all()
	if len(g) != 1 || g[0].Kind != api.GapTruncated {
		t.Fatalf("gaps = %+v", g)
	}
	if want := []api.StopReason{api.StopFanOut, api.StopNodeBudget}; !slices.Equal(g[0].StopReasons, want) {
		t.Fatalf("stop reasons = %v, want %v", g[0].StopReasons, want)
	}
	if want := "truncated by the fan-out budget of 2 per node, node budget of 3 per page; continue with the cursor"; g[0].Message != want {
		t.Fatalf("message = %q, want %q", g[0].Message, want)
	}
}

// TestResultTierStoresOnTypedReasons: whether the results tier stores a page is decided on the typed stop
// reasons (a page the deadline stopped is not stored: a later request may answer more), never on the gap's words.
func TestResultTierStoresOnTypedReasons(t *testing.T) {
	gens := map[string]int64{"ds_a": 1, "epoch": 0}
	for _, c := range []struct {
		name  string
		pg    page
		store bool
	}{
		{"complete", page{gens: gens}, true},
		{"fan-out", page{stops: []api.StopReason{api.StopFanOut}, gens: gens}, true},
		{"node budget and depth cap", page{stops: []api.StopReason{api.StopNodeBudget, api.StopDepthCap}, gens: gens}, true},
		{"deadline", page{stops: []api.StopReason{api.StopFanOut, api.StopDeadline}, gens: gens}, false},
		{"no generations", page{}, false},
		{"no epoch", page{gens: map[string]int64{"ds_a": 1}}, false},
	} {
		if got := storable(c.pg); got != c.store {
			t.Errorf("%s: storable = %v, want %v", c.name, got, c.store)
		}
	}
}

// pageThrough walks c page by page (at most limit pages), each page continuing from the previous one's
// continuation as a cursor would, and returns each page's new datasets and stop reasons.
func pageThrough(t *testing.T, r NeighborReader, c walkCase, clock func() time.Time, limit int) ([][]string, [][]api.StopReason) {
	t.Helper()
	if c.maxNodes == 0 {
		c.maxNodes = 100
	}
	if c.fanOut == 0 {
		c.fanOut = DefaultFanOut
	}
	if c.maxHops == 0 {
		c.maxHops = DefaultMaxDepth
	}
	start := nodeRef{HopDataset, c.start}
	frontier := []frontierEntry{{Key: c.start, Kind: HopDataset, Down: c.down}}
	var st *cursorState
	var pages [][]string
	var stops [][]api.StopReason
	returned := map[string]bool{}
	for range limit {
		spec := walkSpec{depth: c.depth, maxNodes: c.maxNodes, asOf: testAsOf, asOfKey: "t", pubs: []string{graph.PubPublished},
			ec:         edgeCtx{asOf: testAsOf, pubs: map[string]bool{graph.PubPublished: true}, staleMin: DefaultStaleMin, staleFactor: DefaultStaleFactor},
			startNodes: []nodeRef{start}, firstPage: st == nil, maxHops: c.maxHops, fanOut: min(c.fanOut, c.maxNodes-1),
			deadline: clock().Add(DefaultDeadline), clock: clock, granularity: api.GranDataset,
			startNames: map[string]nodeNames{c.start: {cur: graph.NameRef{Namespace: "ns", Name: c.start}}}}
		w := newWalk(spec, r, permcheck.New(authz.AllowAll{}, nil), st)
		if err := w.run(context.Background(), frontier); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, n := range w.newNodes {
			keys = append(keys, n.key)
			returned[api.DatasetID(n.key)] = true
		}
		pages, stops = append(pages, keys), append(stops, w.stops.reasons())
		checkEdges(t, w, returned)
		waiting := w.expandable(slices.Concat(w.pending, w.deferred, w.held))
		if len(waiting) == 0 {
			return pages, stops
		}
		w.truncatedGap(waiting)
		if g := w.gaps.all(); len(g) == 0 || g[len(g)-1].Kind != api.GapTruncated ||
			!slices.Equal(g[len(g)-1].StopReasons, w.stops.reasons()) || !strings.HasPrefix(g[len(g)-1].Message, "truncated by the ") {
			t.Fatalf("truncated page without its TRUNCATED gap and reasons: %+v", g)
		}
		st = &cursorState{AsOf: testAsOf, Frontier: waiting, Reached: w.reached.pack(), Nodes: w.nodes.pack(), Edges: w.edges.pack()}
		frontier = st.Frontier
	}
	t.Fatalf("no end after %d pages: %v", limit, pages)
	return nil, nil
}

// checkEdges: every edge a page returns joins nodes returned on this page or an earlier one.
func checkEdges(t *testing.T, w *walk, returned map[string]bool) {
	t.Helper()
	for _, e := range w.newEdges {
		if !returned[e.From] || !returned[e.To] {
			t.Fatalf("edge %s -> %s names a node not returned", e.From, e.To)
		}
	}
}

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}
