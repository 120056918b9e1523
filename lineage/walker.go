package lineage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
)

// answerer computes one page of a resolved lineage request. The walker is one; the results tier (resultCache)
// decorates it.
type answerer interface {
	answer(ctx context.Context, q request) (page, error)
}

// request is a checked lineage request with its instant pinned and its start resolved.
type request struct {
	args      LineageArgs
	principal authz.Principal
	scope     authz.Scope
	t         int64
	tKey      string
	st        *cursorState // a continuation's state (nil: a first page)
	start     resolvedStart
	gens      map[string]int64 // generations recorded before the walk (the start name's), added to the page's
}

// page is one answered page: the graph, the continuation of a truncated page before it is bound to a principal
// and signed, the budgets that stopped it, the generations it was computed from and the start it was computed
// for.
type page struct {
	graph *api.LineageGraph
	next  *cursorState
	stops []api.StopReason
	gens  map[string]int64
	start resolvedStart
}

// genSource snapshots cache generations (a nil *cache.Store records none).
type genSource interface {
	Snapshot(ctx context.Context, tier string, keys []string) (map[string]int64, bool)
}

// walker answers a page by walking the graph: the frontier hop by hop through the NeighborReader, the nodes it
// found materialised by the catalog, identity gaps, and the continuation.
type walker struct {
	store   *graph.Store
	reader  NeighborReader
	gate    gate
	catalog *catalog.Catalog
	gens    genSource
	cfg     Config
	clock   func() time.Time
}

var _ answerer = walker{}

func (w walker) answer(ctx context.Context, q request) (page, error) {
	spec := w.spec(q.args, q.start, q.t, q.tKey, q.principal, q.st == nil)
	frontier := q.start.entries
	if q.st != nil {
		frontier = q.st.Frontier
	}
	wk := newWalk(spec, w.reader, w.gate, q.st)
	w.recordStartGens(ctx, wk, q.start)
	for k, v := range q.gens {
		wk.gens[k] = v
	}
	if err := wk.run(ctx, frontier); err != nil {
		return page{}, api.StoreErr(err)
	}
	if err := wk.probeWaiting(ctx); err != nil {
		return page{}, api.StoreErr(err)
	}
	pg, err := w.finish(ctx, wk, q.scope)
	if err != nil {
		return page{}, api.StoreErr(err)
	}
	pg.start = q.start
	return pg, nil
}

func (w walker) spec(a LineageArgs, start resolvedStart, t int64, tKey string, p authz.Principal, first bool) walkSpec {
	pubs := []string{graph.PubPublished}
	if a.IncludeAttempted {
		pubs = append(pubs, graph.PubAttempted, graph.PubPending)
	}
	pubSet := map[string]bool{}
	for _, x := range pubs {
		pubSet[x] = true
	}
	ev := map[api.EvidenceKind]bool{}
	for _, e := range a.Evidence {
		ev[e] = true
	}
	return walkSpec{depth: a.Depth, maxNodes: a.MaxNodes, asOf: t, asOfKey: tKey, pubs: pubs, principal: p,
		ec:         edgeCtx{asOf: t, pubs: pubSet, evidence: ev, staleMin: w.cfg.StaleMin, staleFactor: w.cfg.StaleFactor},
		startNodes: start.nodes, firstPage: first, maxHops: w.cfg.MaxDepth, fanOut: min(w.cfg.FanOut, a.MaxNodes-1),
		deadline: w.clock().Add(w.cfg.Deadline), clock: w.clock, granularity: a.Granularity, startNames: start.names}
}

// finish materialises the page's nodes, adds identity gaps, and keeps the continuation when the page was
// truncated.
func (w walker) finish(ctx context.Context, wk *walk, scope authz.Scope) (page, error) {
	nodes, err := w.materialise(ctx, wk.newNodes, wk.spec.asOf)
	if err != nil {
		return page{}, err
	}
	for _, r := range wk.restricted {
		nodes = append(nodes, r)
	}
	g := &api.LineageGraph{Nodes: nodes, Edges: wk.newEdges, FanOutMarkers: wk.markers,
		PermissionsFiltered: !scope.Global, AsOf: graph.FromMillis(wk.spec.asOf)}
	if g.Edges == nil {
		g.Edges = []*api.LineageEdge{}
	}
	if g.FanOutMarkers == nil {
		g.FanOutMarkers = []api.FanOutMarker{}
	}
	if err := w.unresolvedGaps(ctx, wk, nodes); err != nil {
		return page{}, err
	}
	pg := page{graph: g, stops: wk.stops.reasons(), gens: wk.gens}
	waiting := wk.expandable(slices.Concat(wk.pending, wk.deferred, wk.held))
	if len(waiting) > 0 {
		wk.truncatedGap(waiting)
		pg.next = &cursorState{AsOf: wk.spec.asOf, Frontier: waiting, Reached: wk.reached.pack(),
			Nodes: wk.nodes.pack(), Edges: wk.edges.pack()}
	}
	g.Gaps = wk.gaps.all()
	return pg, nil
}

// materialise loads the page's new nodes (one read per kind) in the order they were found.
func (w walker) materialise(ctx context.Context, refs []nodeRef, t int64) ([]api.Node, error) {
	keys := make([]catalog.NodeKey, len(refs))
	for i, r := range refs {
		keys[i] = catalog.NodeKey{Kind: authzKind(r.kind), Key: r.key}
	}
	return w.catalog.Nodes(ctx, keys, t)
}

// unresolvedGaps adds an UNRESOLVED_IDENTITY gap for each unresolved identifier naming a dataset on the page.
func (w walker) unresolvedGaps(ctx context.Context, wk *walk, nodes []api.Node) error {
	var names []graph.NameRef
	ids := map[string][]string{}
	for _, n := range nodes {
		d, ok := n.(*api.Dataset)
		if !ok {
			continue
		}
		for _, nm := range []graph.NameRef{{Namespace: d.Namespace, Name: d.Name}, {Namespace: d.CurrentNamespace, Name: d.CurrentName}} {
			k := nm.Namespace + "\x00" + nm.Name
			if len(ids[k]) == 0 {
				names = append(names, nm)
			}
			if !slices.Contains(ids[k], d.ID) {
				ids[k] = append(ids[k], d.ID)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	if g, ok := w.gens.Snapshot(ctx, cache.TierResults, []string{cache.UnresolvedKey}); ok {
		wk.gens[cache.UnresolvedKey] = g[cache.UnresolvedKey]
	}
	rows, err := w.store.UnresolvedNamed(ctx, names)
	if err != nil {
		return err
	}
	for _, u := range rows {
		wk.gaps.add(api.Gap{Kind: api.GapUnresolvedIdentity, Nodes: ids[u.Namespace+"\x00"+u.Name],
			Message: fmt.Sprintf("identifier %s %s could not be resolved to one dataset: %s", u.Namespace, u.Name, u.Reason)})
	}
	return nil
}

// recordStartGens snapshots the start nodes' generations before the walk reads them.
func (w walker) recordStartGens(ctx context.Context, wk *walk, start resolvedStart) {
	keys := make([]string, len(start.nodes))
	for i, n := range start.nodes {
		keys[i] = n.key
	}
	if g, ok := w.gens.Snapshot(ctx, cache.TierResults, keys); ok {
		for k, v := range g {
			wk.gens[k] = v
		}
	}
}
