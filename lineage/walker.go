package lineage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/internal/permcheck"
	"github.com/headwater-data/headwater/lineage/walk"
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

// walker answers a page by walking the graph (package walk): the frontier hop by hop through the
// NeighborReader, the nodes it found materialised by the catalog, identity gaps, and the continuation.
type walker struct {
	store   *catalogread.Store
	reader  walk.NeighborReader
	gate    permcheck.Gate
	catalog *catalog.Catalog
	gens    genSource
	cfg     Config
	clock   func() time.Time
}

var _ answerer = walker{}

func (w walker) answer(ctx context.Context, q request) (page, error) {
	spec := w.spec(q.args, q.start, q.t, q.tKey, q.principal)
	spec.Gens = w.startGens(ctx, q.start)
	maps.Copy(spec.Gens, q.gens)
	var from *walk.State
	if q.st != nil {
		from = &q.st.State
	}
	res, err := walk.Run(ctx, spec, w.reader, w.gate, from)
	if err != nil {
		return page{}, api.StoreErr(err)
	}
	pg, err := w.finish(ctx, res, q.t, q.scope)
	if err != nil {
		return page{}, api.StoreErr(err)
	}
	pg.start = q.start
	return pg, nil
}

// spec is the walk of a request's page: its start, its budgets (the request's within the server's) and filters.
func (w walker) spec(a LineageArgs, start resolvedStart, t int64, tKey string, p authz.Principal) walk.Spec {
	pubs := []string{graph.PubPublished}
	if a.IncludeAttempted {
		pubs = append(pubs, graph.PubAttempted, graph.PubPending)
	}
	return walk.Spec{Depth: a.Depth, MaxNodes: a.MaxNodes, MaxHops: w.cfg.MaxDepth, FanOut: min(w.cfg.FanOut, a.MaxNodes-1),
		AsOf: t, AsOfKey: tKey, Pubs: pubs, Evidence: a.Evidence, Columns: a.Transformations, StaleMin: w.cfg.StaleMin, StaleFactor: w.cfg.StaleFactor,
		Principal: p, Start: start.nodes, StartNames: start.names, Frontier: start.entries,
		Deadline: w.clock().Add(w.cfg.Deadline), Clock: w.clock}
}

// finish materialises the page's nodes, adds identity gaps, and keeps the continuation when the page was
// truncated.
func (w walker) finish(ctx context.Context, res *walk.Result, t int64, scope authz.Scope) (page, error) {
	nodes, err := w.materialise(ctx, res.Nodes, t)
	if err != nil {
		return page{}, err
	}
	for _, r := range res.Restricted {
		nodes = append(nodes, r)
	}
	g := &api.LineageGraph{Nodes: nodes, Edges: res.Edges, FanOutMarkers: res.Markers,
		PermissionsFiltered: !scope.Global, AsOf: graph.FromMillis(t)}
	if g.Edges == nil {
		g.Edges = []*api.LineageEdge{}
	}
	if g.FanOutMarkers == nil {
		g.FanOutMarkers = []api.FanOutMarker{}
	}
	if err := w.unresolvedGaps(ctx, res, nodes); err != nil {
		return page{}, err
	}
	pg := page{graph: g, stops: res.Stops, gens: res.Gens}
	if res.Next != nil {
		pg.next = &cursorState{AsOf: t, State: *res.Next}
	}
	g.Gaps = res.Gaps()
	return pg, nil
}

// materialise loads the page's new nodes (one read per kind) in the order they were found.
func (w walker) materialise(ctx context.Context, refs []walk.Node, t int64) ([]api.Node, error) {
	keys := make([]catalog.NodeKey, len(refs))
	for i, r := range refs {
		keys[i] = catalog.NodeKey{Kind: walk.AuthzKind(r.Kind), Key: r.Key}
	}
	return w.catalog.Nodes(ctx, keys, t)
}

// unresolvedGaps adds an UNRESOLVED_IDENTITY gap for each unresolved identifier naming a dataset on the page.
func (w walker) unresolvedGaps(ctx context.Context, res *walk.Result, nodes []api.Node) error {
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
		res.Gens[cache.UnresolvedKey] = g[cache.UnresolvedKey]
	}
	rows, err := w.store.UnresolvedNamed(ctx, names)
	if err != nil {
		return err
	}
	for _, u := range rows {
		res.AddGap(api.Gap{Kind: api.GapUnresolvedIdentity, Nodes: ids[u.Namespace+"\x00"+u.Name],
			Message: fmt.Sprintf("identifier %s %s could not be resolved to one dataset: %s", u.Namespace, u.Name, u.Reason)})
	}
	return nil
}

// startGens snapshots the start nodes' generations before the walk reads them.
func (w walker) startGens(ctx context.Context, start resolvedStart) map[string]int64 {
	keys := make([]string, len(start.nodes))
	for i, n := range start.nodes {
		keys[i] = n.Key
	}
	out := map[string]int64{}
	if g, ok := w.gens.Snapshot(ctx, cache.TierResults, keys); ok {
		maps.Copy(out, g)
	}
	return out
}
