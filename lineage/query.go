package lineage

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
)

// LineageArgs are the arguments of the lineage query.
type LineageArgs struct {
	Start            NodeRef
	Direction        Direction
	Depth            int
	Granularity      Granularity
	AsOf             *time.Time
	Evidence         []EvidenceKind
	IncludeAttempted bool
	MaxNodes         int
	After            string
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// check validates arguments and fills defaults.
func (s *Service) check(a LineageArgs) (LineageArgs, error) {
	n := 0
	for _, set := range []bool{a.Start.Dataset != nil, a.Start.Field != nil, a.Start.Job != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return a, badRequest("start: give exactly one of dataset, field, job")
	case a.Depth < 1:
		return a, badRequest("depth: must be at least 1, got %d", a.Depth)
	case a.MaxNodes < 0 || a.MaxNodes > s.cfg.MaxNodesCap:
		return a, badRequest("maxNodes: must be 1..%d, got %d", s.cfg.MaxNodesCap, a.MaxNodes)
	case a.Granularity == GranField && a.Start.Job != nil:
		return a, badRequest("granularity FIELD needs a field or dataset start node")
	case a.Granularity == GranDataset && a.Start.Field != nil:
		return a, badRequest("a field start node needs granularity FIELD")
	}
	if a.Direction == "" {
		a.Direction = Both
	}
	if a.Granularity == "" {
		a.Granularity = GranDataset
	}
	if a.MaxNodes == 0 {
		a.MaxNodes = s.cfg.MaxNodes
	}
	a.MaxNodes = max(a.MaxNodes, 2)
	return a, nil
}

// digestArgs is the canonical form of everything a cursor is bound to (all arguments but `after`).
func digestArgs(a LineageArgs) string {
	var b strings.Builder
	switch {
	case a.Start.Dataset != nil:
		fmt.Fprintf(&b, "D|%s|%s", a.Start.Dataset.Namespace, a.Start.Dataset.Name)
	case a.Start.Field != nil:
		fmt.Fprintf(&b, "F|%s|%s|%s", a.Start.Field.Namespace, a.Start.Field.Name, a.Start.Field.Field)
	case a.Start.Job != nil:
		fmt.Fprintf(&b, "J|%s|%s", a.Start.Job.Namespace, a.Start.Job.Name)
	}
	asOf := "now"
	if a.AsOf != nil {
		asOf = itoa64(graph.Millis(*a.AsOf))
	}
	ev := make([]string, len(a.Evidence))
	for i, e := range a.Evidence {
		ev[i] = string(e)
	}
	slices.Sort(ev)
	fmt.Fprintf(&b, "|%s|%d|%s|%s|%s|%t|%d", a.Direction, a.Depth, a.Granularity, asOf, strings.Join(ev, ","),
		a.IncludeAttempted, a.MaxNodes)
	return digest(b.String())
}

// Lineage answers one page of lineage around a start node.
func (s *Service) Lineage(ctx context.Context, a LineageArgs) (*LineageGraph, error) {
	a, err := s.check(a)
	if err != nil {
		return nil, err
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	p := authz.FromContext(ctx)
	t, tKey := s.asOf(a.AsOf)
	var st *cursorState
	if a.After != "" {
		dec, err := s.cursor.decode(a.After, digest(p.Subject), digestArgs(a))
		if err != nil {
			return nil, err
		}
		st, t, tKey = &dec, dec.AsOf, itoa64(dec.AsOf)
	}
	mode := startFresh
	if s.starts != nil && a.AsOf == nil && st == nil {
		mode = startReuse
	}
	start, err := s.resolveStart(ctx, a, t, mode)
	if err != nil {
		return nil, err
	}
	key := s.resultKey(a, start, s.startBucket(tKey, t, start, st), s.cacheScope(scope, p))
	if g := s.cachedGraph(ctx, key); g != nil {
		if err := s.bindCursor(g, p, a); err != nil {
			return nil, err
		}
		s.touchNodes(ctx, g.Nodes)
		markResolvedFrom(g, start)
		return g, nil
	}
	nameGens := s.nameGens(ctx, start) // before the fresh resolution: a rebinding after it invalidates the entry
	if start.reused {
		ident := start.ident
		if start, err = s.resolveStart(ctx, a, t, startRefresh); err != nil {
			return nil, err
		}
		start.ident = nameGensIdent(nameGens, ident)
		key = s.resultKey(a, start, s.startBucket(tKey, t, start, st), s.cacheScope(scope, p))
	}
	spec := s.spec(a, start, t, tKey, p, st == nil)
	frontier := start.entries
	if st != nil {
		frontier = st.Frontier
	}
	w := newWalk(spec, s.reader, s.gate, st)
	s.recordStartGens(ctx, w, start)
	for k, v := range nameGens {
		w.gens[k] = v
	}
	if err := w.run(ctx, frontier); err != nil {
		return nil, storeErr(err)
	}
	if err := w.probeWaiting(ctx); err != nil {
		return nil, storeErr(err)
	}
	g, err := s.finish(ctx, w, a, p, st, scope)
	if err != nil {
		return nil, storeErr(err)
	}
	if st == nil { // first pages only: a continuation's key holds its cursor, which is bound to one principal
		s.storeGraph(ctx, key, g, w.gens) // stored without resolvedFrom: the key does not hold the name asked
	}
	markResolvedFrom(g, start)
	return g, nil
}

func (s *Service) spec(a LineageArgs, start resolvedStart, t int64, tKey string, p authz.Principal, first bool) walkSpec {
	pubs := []string{graph.PubPublished}
	if a.IncludeAttempted {
		pubs = append(pubs, graph.PubAttempted, graph.PubPending)
	}
	pubSet := map[string]bool{}
	for _, x := range pubs {
		pubSet[x] = true
	}
	ev := map[EvidenceKind]bool{}
	for _, e := range a.Evidence {
		ev[e] = true
	}
	return walkSpec{depth: a.Depth, maxNodes: a.MaxNodes, asOf: t, asOfKey: tKey, pubs: pubs, principal: p,
		ec:         edgeCtx{asOf: t, pubs: pubSet, evidence: ev, staleMin: s.cfg.StaleMin, staleFactor: s.cfg.StaleFactor},
		startNodes: start.nodes, firstPage: first, maxHops: s.cfg.MaxDepth, fanOut: min(s.cfg.FanOut, a.MaxNodes-1),
		deadline: s.clock().Add(s.cfg.Deadline), clock: s.clock, granularity: a.Granularity, startNames: start.names}
}

// cacheScope is the scope part of a result key: the scope fingerprint (effective grants, epoch, settings), plus
// a digest of the principal in REDACT mode, where answers hold per-principal placeholder ids.
func (s *Service) cacheScope(scope authz.Scope, p authz.Principal) string {
	if s.gate.redact() {
		return scope.Fingerprint + "|p:" + digest(p.Kind+"\x00"+p.Subject)
	}
	return scope.Fingerprint
}

func (s *Service) resultKey(a LineageArgs, start resolvedStart, tKey string, scope string) cache.Key {
	ev := make([]string, len(a.Evidence))
	for i, e := range a.Evidence {
		ev[i] = string(e)
	}
	page := ""
	if a.After != "" {
		page = digest(a.After)
	}
	return cache.Key{Tier: cache.TierResults, Op: "lineage", Node: start.nodes[0].key, Name: start.ident, Direction: string(a.Direction),
		Depth: a.Depth, Granularity: string(a.Granularity), AsOf: tKey, Evidence: ev,
		IncludeAttempted: a.IncludeAttempted, MaxNodes: a.MaxNodes, Page: page, Scope: scope}
}

// finish materialises the page's nodes, adds identity gaps, and signs the cursor when the page was truncated.
func (s *Service) finish(ctx context.Context, w *walk, a LineageArgs, p authz.Principal, st *cursorState, scope authz.Scope) (*LineageGraph, error) {
	nodes, err := s.materialise(ctx, w.newNodes, w.spec.asOf)
	if err != nil {
		return nil, err
	}
	for _, r := range w.restricted {
		nodes = append(nodes, r)
	}
	g := &LineageGraph{Nodes: nodes, Edges: w.newEdges, FanOutMarkers: w.markers,
		PermissionsFiltered: !scope.Global, AsOf: graph.FromMillis(w.spec.asOf)}
	if g.Edges == nil {
		g.Edges = []*LineageEdge{}
	}
	if g.FanOutMarkers == nil {
		g.FanOutMarkers = []FanOutMarker{}
	}
	if err := s.unresolvedGaps(ctx, w, nodes); err != nil {
		return nil, err
	}
	g.cacheable = !slices.Contains(w.reasons, "deadline")
	waiting := w.expandable(slices.Concat(w.pending, w.deferred, w.held))
	if len(waiting) > 0 {
		w.truncatedGap(waiting)
		g.next = &cursorState{AsOf: w.spec.asOf, Frontier: waiting, Reached: w.reached.pack(),
			Nodes: w.nodes.pack(), Edges: w.edges.pack()}
		if err := s.bindCursor(g, p, a); err != nil {
			return nil, err
		}
	}
	g.Gaps = w.gaps.all()
	return g, nil
}

// bindCursor gives a truncated page its cursor: the continuation bound to the caller and signed.
func (s *Service) bindCursor(g *LineageGraph, p authz.Principal, a LineageArgs) error {
	if g.next == nil {
		return nil
	}
	st := *g.next
	st.Subject, st.Args = digest(p.Subject), digestArgs(a)
	cur, err := s.cursor.encode(st)
	if err != nil {
		return err
	}
	g.Truncated, g.Cursor = true, &cur
	return nil
}

// unresolvedGaps adds an UNRESOLVED_IDENTITY gap for each unresolved identifier naming a dataset on the page.
func (s *Service) unresolvedGaps(ctx context.Context, w *walk, nodes []Node) error {
	var names []graph.NameRef
	ids := map[string][]string{}
	for _, n := range nodes {
		d, ok := n.(*Dataset)
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
	if g, ok := s.cache.Snapshot(ctx, cache.TierResults, []string{cache.UnresolvedKey}); ok {
		w.gens[cache.UnresolvedKey] = g[cache.UnresolvedKey]
	}
	rows, err := s.store.UnresolvedNamed(ctx, names)
	if err != nil {
		return err
	}
	for _, u := range rows {
		w.gaps.add(Gap{Kind: GapUnresolvedIdentity, Nodes: ids[u.Namespace+"\x00"+u.Name],
			Message: fmt.Sprintf("identifier %s %s could not be resolved to one dataset: %s", u.Namespace, u.Name, u.Reason)})
	}
	return nil
}

// startBucket is how a first page about "now" is keyed in the results tier: the "now" bucket shifted by an
// offset derived from the start node, so the hot answers of different roots do not all expire at the same
// instant and send a burst of misses to Neo4j at every bucket boundary. Other pages keep tKey.
func (s *Service) startBucket(tKey string, t int64, start resolvedStart, st *cursorState) string {
	if st != nil || !strings.HasPrefix(tKey, "now@") || len(start.nodes) == 0 {
		return tKey
	}
	bucket := s.cfg.NowBucket.Milliseconds()
	if bucket <= 0 {
		return tKey
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(start.nodes[0].key))
	offset := int64(h.Sum64() % uint64(bucket))
	return "now@" + itoa64((t-offset)/bucket*bucket+offset)
}

// nameGens snapshots the generation of the name a reused start was asked by (nil otherwise): entries keyed by
// that name record it, so a rebinding of the name (the projector bumps graph.NameGenKey) invalidates them.
func (s *Service) nameGens(ctx context.Context, start resolvedStart) map[string]int64 {
	if !start.reused || start.ident == "" {
		return nil
	}
	k := graph.NameGenKey(start.ident)
	g, ok := s.cache.Snapshot(ctx, cache.TierResults, []string{k})
	if !ok {
		return nil
	}
	return map[string]int64{k: g[k]}
}

// nameGensIdent keeps the name in the result key only when its generation was recorded: an entry keyed by a
// name must be invalidated by that name's rebinding.
func nameGensIdent(gens map[string]int64, ident string) string {
	if len(gens) == 0 {
		return ""
	}
	return ident
}

// recordStartGens snapshots the start nodes' generations before the walk reads them.
func (s *Service) recordStartGens(ctx context.Context, w *walk, start resolvedStart) {
	keys := make([]string, len(start.nodes))
	for i, n := range start.nodes {
		keys[i] = n.key
	}
	if g, ok := s.cache.Snapshot(ctx, cache.TierResults, keys); ok {
		for k, v := range g {
			w.gens[k] = v
		}
	}
}

// markResolvedFrom says, on the start node of a first page, that it was found under another name.
func markResolvedFrom(g *LineageGraph, start resolvedStart) {
	if start.renamedFrom == nil || len(g.Nodes) == 0 {
		return
	}
	if d, ok := g.Nodes[0].(*Dataset); ok && d.Key == start.nodes[0].key {
		d.ResolvedFrom = start.renamedFrom
	}
}
