package lineage

import (
	"context"
	"maps"
	"time"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/walk"
)

// cachedReader decorates a walk.NeighborReader with the neighbour-list tier: one entry per (frontier node, hop kind,
// direction, asOf key, publication set), holding that node's rows and the generations they depend on.
type cachedReader struct {
	inner walk.NeighborReader
	store *cache.Store
	ttl   time.Duration
}

var _ walk.NeighborReader = cachedReader{}

// nbValue is a cached neighbour list of one node.
type nbValue struct {
	Rows []graph.HopRow  `json:"r"`
	Far  []graph.NameRef `json:"fa,omitempty"` // field hops: the far side of the field's dataset-level lineage
}

func (c cachedReader) key(req walk.HopRequest, node string) cache.Key {
	op := string(req.Kind)
	if req.Names {
		op += "N" // names-only rows
	}
	return cache.Key{Tier: cache.TierNeighbors, Op: op, Node: node,
		Direction: string(walk.DirOf(req.Down)), AsOf: req.AsOfKey, Pubs: req.Pubs, Limit: req.Limit}
}

// Neighbors serves valid entries from Redis and reads the rest in one inner read. A read restricted to listed
// neighbours (Only) is not cached: its value depends on the caller's permissions.
func (c cachedReader) Neighbors(ctx context.Context, req walk.HopRequest) (walk.HopResult, error) {
	if req.Only != nil {
		return c.readMissing(ctx, req, req.Keys, walk.HopResult{Gens: map[string]int64{}, Far: map[string][]graph.NameRef{}})
	}
	keys := make([]cache.Key, len(req.Keys))
	for i, k := range req.Keys {
		keys[i] = c.key(req, k)
	}
	hits := c.store.GetMany(ctx, cache.TierNeighbors, keys)
	out := walk.HopResult{Gens: map[string]int64{}, Far: map[string][]graph.NameRef{}}
	var missing []string
	for i, h := range hits {
		var v nbValue
		if h == nil || json.Unmarshal(h.Value, &v) != nil {
			missing = append(missing, req.Keys[i])
			continue
		}
		addHop(&out, req.Keys[i], v, h.Gens)
	}
	if len(missing) == 0 {
		return out, nil
	}
	return c.readMissing(ctx, req, missing, out)
}

// addHop adds the neighbour list of frontier node src (and the generations it depends on) to a hop result.
func addHop(r *walk.HopResult, src string, v nbValue, gens map[string]int64) {
	r.Rows = append(r.Rows, v.Rows...)
	if len(v.Far) > 0 {
		r.Far[src] = v.Far
	}
	maps.Copy(r.Gens, gens)
}

// readMissing snapshots the frontier's generations, reads, then snapshots the generations of what the read
// discovered (jobs, neighbours) and stores one entry per node.
func (c cachedReader) readMissing(ctx context.Context, req walk.HopRequest, missing []string, out walk.HopResult) (walk.HopResult, error) {
	before, ok := c.store.Snapshot(ctx, cache.TierNeighbors, missing)
	sub := req
	sub.Keys = missing
	res, err := c.inner.Neighbors(ctx, sub)
	if err != nil {
		return walk.HopResult{}, err
	}
	byNode := map[string]*nbValue{}
	for _, k := range missing {
		byNode[k] = &nbValue{Rows: []graph.HopRow{}}
	}
	for _, r := range res.Rows {
		byNode[r.Src].Rows = append(byNode[r.Src].Rows, r)
	}
	for k, far := range res.Far {
		if v := byNode[k]; v != nil {
			v.Far = far
		}
	}
	after, ok2 := c.store.Snapshot(ctx, cache.TierNeighbors, dependencies(res.Rows))
	items := make([]cache.Item, 0, len(missing))
	for _, k := range missing {
		gens := entryGens(k, byNode[k].Rows, before, after)
		addHop(&out, k, *byNode[k], gens)
		if ok && ok2 && req.Only == nil {
			items = append(items, cache.Item{Key: c.key(req, k), Value: byNode[k], Gens: gens})
		}
	}
	c.store.PutMany(ctx, cache.TierNeighbors, c.ttl, items)
	return out, nil
}

// dependencies are the nodes a hop's rows depend on besides the frontier: neighbours, their datasets, jobs.
func dependencies(rows []graph.HopRow) []string {
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, r := range rows {
		add(r.Dst)
		add(r.DstDataset)
		if r.Job != nil {
			add(r.Job.Key)
		}
	}
	return out
}

// entryGens: the node's generation from before the read, its dependencies' from after, and the epoch.
func entryGens(node string, rows []graph.HopRow, before, after map[string]int64) map[string]int64 {
	g := map[string]int64{node: before[node], cache.EpochKey: before[cache.EpochKey]}
	for _, k := range dependencies(rows) {
		g[k] = after[k]
	}
	return g
}
