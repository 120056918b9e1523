package walk

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
// lineage.Service does (the continuation of a page starts the next) and checks every page's nodes, its typed stop
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
	w.truncatedGap([]Entry{{Key: "k", Kind: HopDataset}})
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

// pageThrough walks c (Run) page by page (at most limit pages), each page continuing from the previous one's
// continuation as a cursor would, and returns each page's new datasets and stop reasons.
func pageThrough(t *testing.T, r NeighborReader, c walkCase, clock func() time.Time, limit int) ([][]string, [][]api.StopReason) {
	t.Helper()
	if c.maxNodes == 0 {
		c.maxNodes = 100
	}
	if c.fanOut == 0 {
		c.fanOut = 200
	}
	if c.maxHops == 0 {
		c.maxHops = 20
	}
	var from *State
	var pages [][]string
	var stops [][]api.StopReason
	returned := map[string]bool{}
	for range limit {
		spec := Spec{Depth: c.depth, MaxNodes: c.maxNodes, MaxHops: c.maxHops, FanOut: min(c.fanOut, c.maxNodes-1),
			AsOf: testAsOf, AsOfKey: "t", Pubs: []string{graph.PubPublished}, StaleMin: 24 * time.Hour, StaleFactor: 3,
			Start: []Node{{Kind: HopDataset, Key: c.start}}, Frontier: []Entry{{Key: c.start, Kind: HopDataset, Down: c.down}},
			StartNames: map[string]Names{c.start: {Current: graph.NameRef{Namespace: "ns", Name: c.start}}},
			Deadline:   clock().Add(5 * time.Second), Clock: clock}
		res, err := Run(context.Background(), spec, r, permcheck.New(authz.AllowAll{}, nil), from)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, n := range res.Nodes {
			keys = append(keys, n.Key)
			returned[api.DatasetID(n.Key)] = true
		}
		pages, stops = append(pages, keys), append(stops, res.Stops)
		checkEdges(t, res.Edges, returned)
		if res.Next == nil {
			return pages, stops
		}
		if g := res.Gaps(); !res.Truncated || len(g) == 0 || g[len(g)-1].Kind != api.GapTruncated ||
			!slices.Equal(g[len(g)-1].StopReasons, res.Stops) || !strings.HasPrefix(g[len(g)-1].Message, "truncated by the ") {
			t.Fatalf("truncated page without its TRUNCATED gap and reasons: %+v", g)
		}
		from = res.Next
	}
	t.Fatalf("no end after %d pages: %v", limit, pages)
	return nil, nil
}

// checkEdges: every edge a page returns joins nodes returned on this page or an earlier one.
func checkEdges(t *testing.T, edges []*api.LineageEdge, returned map[string]bool) {
	t.Helper()
	for _, e := range edges {
		if !returned[e.From] || !returned[e.To] {
			t.Fatalf("edge %s -> %s names a node not returned", e.From, e.To)
		}
	}
}

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}
