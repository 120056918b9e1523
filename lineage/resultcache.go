package lineage

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
)

// resultCache is the results tier: an answerer that serves first pages from Redis and otherwise asks the one it
// decorates (the walker), like cachedReader decorates the NeighborReader. It owns every caching decision of the
// lineage query: the key (scope fingerprint, start bucket), the start name's generation, re-resolving a start the
// start cache gave, what is stored (never a page a deadline stopped) and the audit of an answer served from it.
type resultCache struct {
	inner   answerer
	store   *cache.Store
	catalog *catalog.Catalog // audits the sensitive datasets of an answer served from the cache
	redact  func() bool      // REDACT mode now: answers hold per-principal placeholders
	cfg     Config
	// resolve reads a start again from Neo4j (startRefresh) when the start cache gave it and the answer missed.
	resolve func(ctx context.Context, a LineageArgs, t int64, mode startMode) (resolvedStart, error)
}

var _ answerer = resultCache{}

// answer serves a valid entry, or computes the page and stores it (first pages only: a continuation's key holds
// its cursor, which is bound to one principal). Pages are stored without resolvedFrom (the key does not hold the
// name asked) and without a signed cursor (the caller binds the continuation).
func (c resultCache) answer(ctx context.Context, q request) (page, error) {
	key := c.key(q)
	if pg, ok := c.get(ctx, key); ok {
		c.catalog.TouchNodes(ctx, pg.graph.Nodes)
		pg.start = q.start
		return pg, nil
	}
	q.gens = c.nameGens(ctx, q.start) // before the fresh resolution: a rebinding after it invalidates the entry
	if q.start.reused {
		ident := q.start.ident
		start, err := c.resolve(ctx, q.args, q.t, startRefresh)
		if err != nil {
			return page{}, err
		}
		start.ident = nameGensIdent(q.gens, ident)
		q.start = start
		key = c.key(q)
	}
	pg, err := c.inner.answer(ctx, q)
	if err != nil {
		return page{}, err
	}
	if q.st == nil {
		c.put(ctx, key, pg)
	}
	return pg, nil
}

// key is the result key of a request: its arguments, start, start bucket and scope.
func (c resultCache) key(q request) cache.Key {
	a := q.args
	ev := make([]string, len(a.Evidence))
	for i, e := range a.Evidence {
		ev[i] = string(e)
	}
	page := ""
	if a.After != "" {
		page = digest(a.After)
	}
	return cache.Key{Tier: cache.TierResults, Op: "lineage", Node: q.start.nodes[0].Key, Name: q.start.ident,
		Direction: string(a.Direction), Depth: a.Depth, Granularity: string(a.Granularity),
		AsOf: c.startBucket(q.tKey, q.t, q.start, q.st), Evidence: ev, IncludeAttempted: a.IncludeAttempted,
		MaxNodes: a.MaxNodes, Page: page, Scope: c.scope(q.scope, q.principal), Transformations: a.Transformations.Canonical()}
}

// scope is the scope part of a result key: the scope fingerprint (effective grants, epoch, settings), plus
// a digest of the principal in REDACT mode, where answers hold per-principal placeholder ids.
func (c resultCache) scope(scope authz.Scope, p authz.Principal) string {
	if c.redact() {
		return scope.Fingerprint + "|p:" + digest(p.Kind+"\x00"+p.Subject)
	}
	return scope.Fingerprint
}

// startBucket is how a first page about "now" is keyed in the results tier: the "now" bucket shifted by an
// offset derived from the start node, so the hot answers of different roots do not all expire at the same
// instant and send a burst of misses to Neo4j at every bucket boundary. Other pages keep tKey.
func (c resultCache) startBucket(tKey string, t int64, start resolvedStart, st *cursorState) string {
	if st != nil || !strings.HasPrefix(tKey, "now@") || len(start.nodes) == 0 {
		return tKey
	}
	bucket := c.cfg.NowBucket.Milliseconds()
	if bucket <= 0 {
		return tKey
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(start.nodes[0].Key))
	offset := int64(h.Sum64() % uint64(bucket))
	return "now@" + itoa64((t-offset)/bucket*bucket+offset)
}

// nameGens snapshots the generation of the name a reused start was asked by (nil otherwise): entries keyed by
// that name record it, so a rebinding of the name (the projector bumps graph.NameGenKey) invalidates them.
func (c resultCache) nameGens(ctx context.Context, start resolvedStart) map[string]int64 {
	if !start.reused || start.ident == "" {
		return nil
	}
	k := graph.NameGenKey(start.ident)
	g, ok := c.store.Snapshot(ctx, cache.TierResults, []string{k})
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

// cachedNode is a Node in the results tier (the interface is stored with its kind).
type cachedNode struct {
	Dataset *api.Dataset `json:"d,omitempty"`
	Field   *api.Field   `json:"f,omitempty"`
	Job     *api.Job     `json:"j,omitempty"`
	// Restricted placeholders are cached only under keys that include the principal (REDACT mode).
	Restricted *api.RestrictedNode `json:"r,omitempty"`
}

type cachedGraph struct {
	Graph api.LineageGraph `json:"g"`
	Nodes []cachedNode     `json:"n"`
	// Next is a truncated page's continuation without its principal (bindCursor binds it to each caller).
	Next *cursorState `json:"c,omitempty"`
}

// storable: a page is stored unless the deadline stopped it, and only with the generations it was computed from
// (the epoch among them).
func storable(pg page) bool {
	_, epoch := pg.gens[cache.EpochKey]
	return epoch && !slices.Contains(pg.stops, api.StopDeadline)
}

func (c resultCache) get(ctx context.Context, k cache.Key) (page, bool) {
	h := c.store.Get(ctx, cache.TierResults, k)
	if h == nil {
		return page{}, false
	}
	var cg cachedGraph
	if err := json.Unmarshal(h.Value, &cg); err != nil {
		return page{}, false
	}
	g := cg.Graph
	if g.Truncated && cg.Next == nil {
		return page{}, false
	}
	g.Truncated, g.Cursor = false, nil
	g.Nodes = make([]api.Node, 0, len(cg.Nodes))
	for _, n := range cg.Nodes {
		switch {
		case n.Dataset != nil:
			g.Nodes = append(g.Nodes, n.Dataset)
		case n.Field != nil:
			g.Nodes = append(g.Nodes, n.Field)
		case n.Job != nil:
			g.Nodes = append(g.Nodes, n.Job)
		case n.Restricted != nil:
			g.Nodes = append(g.Nodes, n.Restricted)
		}
	}
	return page{graph: &g, next: cg.Next}, true
}

// put caches first pages, complete or truncated by the node, fan-out or depth budget (with their continuation,
// never a signed cursor), but not a page the deadline stopped (a later request may answer more of it), and never
// without recorded generations.
func (c resultCache) put(ctx context.Context, k cache.Key, pg page) {
	if !storable(pg) {
		return
	}
	cg := cachedGraph{Graph: *pg.graph, Next: pg.next}
	cg.Graph.Nodes, cg.Graph.Cursor = nil, nil
	for _, n := range pg.graph.Nodes {
		switch v := n.(type) {
		case *api.Dataset:
			cg.Nodes = append(cg.Nodes, cachedNode{Dataset: v})
		case *api.Field:
			cg.Nodes = append(cg.Nodes, cachedNode{Field: v})
		case *api.Job:
			cg.Nodes = append(cg.Nodes, cachedNode{Job: v})
		case *api.RestrictedNode:
			cg.Nodes = append(cg.Nodes, cachedNode{Restricted: v})
		}
	}
	c.store.PutMany(ctx, cache.TierResults, c.cfg.ResultCacheTTL, []cache.Item{{Key: k, Value: cg, Gens: pg.gens}})
}
