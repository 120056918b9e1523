package lineage

import (
	"context"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/cache"
)

// cachedNode is a Node in the results tier (the interface is stored with its kind).
type cachedNode struct {
	Dataset *Dataset `json:"d,omitempty"`
	Field   *Field   `json:"f,omitempty"`
	Job     *Job     `json:"j,omitempty"`
	// Restricted placeholders are cached only under keys that include the principal (REDACT mode).
	Restricted *RestrictedNode `json:"r,omitempty"`
}

type cachedGraph struct {
	Graph LineageGraph `json:"g"`
	Nodes []cachedNode `json:"n"`
	// Next is a truncated page's continuation without its principal (bindCursor binds it to each caller).
	Next *cursorState `json:"c,omitempty"`
}

func (s *Service) cachedGraph(ctx context.Context, k cache.Key) *LineageGraph {
	h := s.cache.Get(ctx, cache.TierResults, k)
	if h == nil {
		return nil
	}
	var cg cachedGraph
	if err := json.Unmarshal(h.Value, &cg); err != nil {
		return nil
	}
	g := cg.Graph
	g.Cursor, g.next = nil, cg.Next
	if g.Truncated && g.next == nil {
		return nil
	}
	g.Nodes = make([]Node, 0, len(cg.Nodes))
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
	return &g
}

// storeGraph caches first pages, complete or truncated by the node, fan-out or depth budget (with their
// continuation, never a signed cursor), but not a page the deadline cut, and never without recorded generations.
func (s *Service) storeGraph(ctx context.Context, k cache.Key, g *LineageGraph, gens map[string]int64) {
	if !g.cacheable || (g.Truncated && g.next == nil) || len(gens) == 0 {
		return
	}
	if _, ok := gens[cache.EpochKey]; !ok {
		return
	}
	cg := cachedGraph{Graph: *g, Next: g.next}
	cg.Graph.Nodes, cg.Graph.Cursor = nil, nil
	for _, n := range g.Nodes {
		switch v := n.(type) {
		case *Dataset:
			cg.Nodes = append(cg.Nodes, cachedNode{Dataset: v})
		case *Field:
			cg.Nodes = append(cg.Nodes, cachedNode{Field: v})
		case *Job:
			cg.Nodes = append(cg.Nodes, cachedNode{Job: v})
		case *RestrictedNode:
			cg.Nodes = append(cg.Nodes, cachedNode{Restricted: v})
		}
	}
	s.cache.PutMany(ctx, cache.TierResults, s.cfg.ResultCacheTTL, []cache.Item{{Key: k, Value: cg, Gens: gens}})
}
