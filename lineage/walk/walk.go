package walk

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// maxGapNodes bounds the node ids listed in one TRUNCATED gap (the page budgets themselves are lineage.Config's,
// with their defaults in lineage/budgets.go).
const maxGapNodes = 50

// Spec is one page of a walk, validated: where it starts, what counts, and the page's budgets.
type Spec struct {
	Depth    int // requested total depth
	MaxNodes int // node budget of the page
	MaxHops  int // hops per page (the server's depth cap)
	FanOut   int // neighbours of one node per page
	AsOf     int64
	AsOfKey  string   // how AsOf appears in cache keys: exact ms for an explicit asOf, a bucket for "now"
	Pubs     []string // publication states that count
	Evidence []api.EvidenceKind
	// Columns filters the column edges a FIELD walk crosses by their transformations (nil: every edge).
	Columns *api.TransformationFilter
	// StaleMin and StaleFactor set an observed edge's staleness threshold.
	StaleMin    time.Duration
	StaleFactor float64
	Principal   authz.Principal
	// Start are the start node(s), returned on a first page; StartNames their identities (the first hop checks
	// VIEW_LINEAGE under them); Frontier the entries a first page expands (a continuation its State's).
	Start      []Node
	StartNames map[string]Names
	Frontier   []Entry
	Deadline   time.Time
	Clock      func() time.Time
	// OneShot is an answer without a cursor (impact): fan-out continuations never run, so a level with some
	// does not hold the deeper ones back. Clamped says the request's depth was cut to MaxHops (impact): the
	// answer is truncated by the depth cap even when nothing waits.
	OneShot, Clamped bool
	// Gens are the cache generations recorded before the walk; the walk adds those its reads depend on.
	Gens map[string]int64
}

// Result is one page of a walk.
type Result struct {
	Nodes      []Node // new nodes in the order found (a first page starts with the start nodes)
	Restricted []*api.RestrictedNode
	Edges      []*api.LineageEdge
	Markers    []api.FanOutMarker
	Stops      []api.StopReason // the budgets that stopped the page, in the order first reached
	Next       *State           // the continuation; nil when nothing waits
	Truncated  bool             // something waits, or the depth was clamped
	Gens       map[string]int64
	gaps       gapSet
	truncated  *api.Gap
}

// AddGap adds a gap found about the page after the walk (once each, before the TRUNCATED gap).
func (r *Result) AddGap(g api.Gap) { r.gaps.add(g) }

// Gaps are the page's gaps in the order found, the TRUNCATED gap last.
func (r *Result) Gaps() []api.Gap {
	if r.truncated != nil {
		r.gaps.add(*r.truncated)
		r.truncated = nil
	}
	return r.gaps.all()
}

// Run walks one page: from the spec's frontier (a first page) or a continuation, hop by hop until the depth or a
// budget stops it, every hop checked with the gate in one policy call.
func Run(ctx context.Context, s Spec, r NeighborReader, g permcheck.Gate, from *State) (*Result, error) {
	w := newWalk(s.spec(from == nil), r, g, from)
	maps.Copy(w.gens, s.Gens)
	if s.Clamped {
		w.stops.add(api.StopDepthCap, "depth cap of "+itoa(s.MaxHops)+" hops")
	}
	frontier := s.Frontier
	if from != nil {
		frontier = from.Frontier
	}
	if err := w.run(ctx, frontier); err != nil {
		return nil, err
	}
	if err := w.probeWaiting(ctx); err != nil {
		return nil, err
	}
	return w.result(), nil
}

func (s Spec) spec(first bool) walkSpec {
	pubSet := map[string]bool{}
	for _, x := range s.Pubs {
		pubSet[x] = true
	}
	ev := map[api.EvidenceKind]bool{}
	for _, e := range s.Evidence {
		ev[e] = true
	}
	return walkSpec{depth: s.Depth, maxNodes: s.MaxNodes, asOf: s.AsOf, asOfKey: s.AsOfKey, pubs: s.Pubs,
		principal: s.Principal,
		ec: edgeCtx{asOf: s.AsOf, pubs: pubSet, evidence: ev, columns: s.Columns, staleMin: s.StaleMin,
			staleFactor: s.StaleFactor},
		startNodes: s.Start, firstPage: first, maxHops: s.MaxHops, fanOut: s.FanOut, deadline: s.Deadline,
		clock: s.Clock, startNames: s.StartNames, oneShot: s.OneShot, clamped: s.Clamped}
}

// result is what the page found, with its continuation and its TRUNCATED gap.
func (w *walk) result() *Result {
	r := &Result{Nodes: w.newNodes, Restricted: w.restricted, Edges: w.newEdges, Markers: w.markers,
		Stops: w.stops.reasons(), Gens: w.gens, gaps: w.gaps}
	waiting := w.expandable(slices.Concat(w.pending, w.deferred, w.held))
	if len(waiting) > 0 || w.spec.clamped {
		g := w.truncatedGapOf(waiting)
		r.truncated, r.Truncated = &g, true
	}
	if len(waiting) > 0 {
		r.Next = &State{Frontier: waiting, Reached: w.reached.pack(), Nodes: w.nodes.pack(), Edges: w.edges.pack()}
	}
	return r
}
