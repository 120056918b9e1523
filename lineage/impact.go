package lineage

import (
	"context"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/walk"
)

// Impact answers what a change to a field affects downstream. A field is DIRECT when some path to it carries
// only DIRECT transformations (its values derive from the changed field), INDIRECT otherwise (reached only through
// a JOIN, FILTER, GROUP_BY, ... somewhere on the way). Each comes with its shortest path of that kind.
func (s *Service) Impact(ctx context.Context, ref api.FieldRef, depth *int, asOf *time.Time) (*api.ImpactReport, error) {
	d := DefaultImpactDepth
	if depth != nil {
		d = *depth
	}
	if d < 1 {
		return nil, api.BadRequest("depth: must be at least 1, got %d", d)
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	t, tKey := s.asOf(asOf)
	start, ds, err := s.catalog.FindField(ctx, ref, t)
	if err != nil {
		return nil, err
	}
	a := LineageArgs{Direction: api.Downstream, Depth: min(d, s.cfg.MaxDepth), Granularity: api.GranField, MaxNodes: maxImpactFields}
	rs := resolvedStart{}
	rs.add(walk.Node{Kind: walk.HopField, Key: start.Key}, true, api.Downstream)
	rs.name(start.Key, walk.DatasetNames(ds))
	spec := s.walker.spec(a, rs, t, tKey, authz.FromContext(ctx))
	spec.OneShot, spec.Clamped = true, d > s.cfg.MaxDepth
	res, err := walk.Run(ctx, spec, s.walker.reader, s.walker.gate, nil)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	r, nodes, err := s.walker.impactReport(ctx, res, api.FieldID(start.Key), t, scope)
	if err != nil || s.trust == nil {
		return r, err
	}
	if err := s.trust.impact(ctx, r, authz.FromContext(ctx), scope, nodes, res.Edges, t); err != nil {
		return nil, err
	}
	return r, nil
}

// impactReport builds the report and returns it with the nodes it was built from.
func (s walker) impactReport(ctx context.Context, res *walk.Result, root string, t int64, scope authz.Scope) (*api.ImpactReport, []api.Node, error) {
	nodes, err := s.materialise(ctx, res.Nodes, t)
	if err != nil {
		return nil, nil, api.StoreErr(err)
	}
	fields := map[string]*api.Field{}
	for _, n := range nodes {
		if f, ok := n.(*api.Field); ok {
			fields[f.ID] = f
		}
	}
	directPaths := shortestPaths(root, res.Edges, isDirect)
	allPaths := shortestPaths(root, res.Edges, func(*api.LineageEdge) bool { return true })
	r := &api.ImpactReport{Direct: []*api.ImpactedField{}, Indirect: []*api.ImpactedField{}, PermissionsFiltered: !scope.Global}
	for _, n := range nodes {
		f, ok := n.(*api.Field)
		if !ok || f.ID == root {
			continue
		}
		if p, ok := directPaths[f.ID]; ok {
			r.Direct = append(r.Direct, &api.ImpactedField{Field: fields[f.ID], Distance: len(p), Path: p})
		} else if p, ok := allPaths[f.ID]; ok {
			r.Indirect = append(r.Indirect, &api.ImpactedField{Field: fields[f.ID], Distance: len(p), Path: p})
		}
	}
	jobs, err := s.impactJobs(ctx, res.Edges)
	if err != nil {
		return nil, nil, err
	}
	r.Jobs, r.Truncated, r.Gaps = jobs, res.Truncated, res.Gaps()
	return r, nodes, nil
}

func isDirect(e *api.LineageEdge) bool {
	if len(e.Transformations) == 0 {
		return true
	}
	for _, t := range e.Transformations {
		if t.Type == "DIRECT" {
			return true
		}
	}
	return false
}

// shortestPaths runs a BFS from root over the edges that pass keep, returning each reached node's path.
func shortestPaths(root string, edges []*api.LineageEdge, keep func(*api.LineageEdge) bool) map[string][]*api.LineageEdge {
	out := map[string][]*api.LineageEdge{}
	if len(edges) == 0 {
		return out
	}
	adj := map[string][]*api.LineageEdge{}
	for _, e := range edges {
		if keep(e) {
			adj[e.From] = append(adj[e.From], e)
		}
	}
	out[root] = []*api.LineageEdge{}
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		cur := queue[0]
		for _, e := range adj[cur] {
			if _, seen := out[e.To]; !seen {
				out[e.To] = append(slices.Clone(out[cur]), e)
				queue = append(queue, e.To)
			}
		}
	}
	delete(out, root)
	return out
}

func (s walker) impactJobs(ctx context.Context, edges []*api.LineageEdge) ([]*api.Job, error) {
	var keys []string
	for _, e := range edges {
		if e.JobKey != "" && !slices.Contains(keys, e.JobKey) {
			keys = append(keys, e.JobKey)
		}
	}
	slices.Sort(keys)
	refs := make([]catalog.NodeKey, len(keys))
	for i, k := range keys {
		refs[i] = catalog.NodeKey{Kind: authz.KindJob, Key: k}
	}
	nodes, err := s.catalog.Nodes(ctx, refs, graph.Millis(s.clock()))
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := []*api.Job{}
	for _, n := range nodes {
		if j, ok := n.(*api.Job); ok {
			out = append(out, j)
		}
	}
	return out, nil
}
