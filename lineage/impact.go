package lineage

import (
	"context"
	"slices"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// Impact answers what a change to a field affects downstream. A field is DIRECT when some path to it carries
// only DIRECT transformations (its values derive from the changed field), INDIRECT otherwise (reached only through
// a JOIN, FILTER, GROUP_BY, ... somewhere on the way). Each comes with its shortest path of that kind.
func (s *Service) Impact(ctx context.Context, ref FieldRef, depth *int, asOf *time.Time) (*ImpactReport, error) {
	d := DefaultImpactDepth
	if depth != nil {
		d = *depth
	}
	if d < 1 {
		return nil, badRequest("depth: must be at least 1, got %d", d)
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	t, tKey := s.asOf(asOf)
	start, ds, err := s.findField(ctx, ref, t)
	if err != nil {
		return nil, err
	}
	a := LineageArgs{Direction: Downstream, Depth: min(d, s.cfg.MaxDepth), Granularity: GranField, MaxNodes: maxImpactFields}
	rs := resolvedStart{}
	rs.add(nodeRef{HopField, start.Key}, true, Downstream)
	rs.name(start.Key, datasetNames(ds))
	spec := s.spec(a, rs, t, tKey, authz.FromContext(ctx), true)
	spec.oneShot = true
	w := newWalk(spec, s.reader, s.gate, nil)
	if d > s.cfg.MaxDepth {
		w.reasons = append(w.reasons, "depth cap of "+itoa(s.cfg.MaxDepth)+" hops")
	}
	if err := w.run(ctx, rs.entries); err != nil {
		return nil, storeErr(err)
	}
	return s.impactReport(ctx, w, FieldID(start.Key), d > s.cfg.MaxDepth, scope)
}

func (s *Service) impactReport(ctx context.Context, w *walk, root string, clamped bool, scope authz.Scope) (*ImpactReport, error) {
	nodes, err := s.materialise(ctx, w.newNodes, w.spec.asOf)
	if err != nil {
		return nil, storeErr(err)
	}
	fields := map[string]*Field{}
	for _, n := range nodes {
		if f, ok := n.(*Field); ok {
			fields[f.ID] = f
		}
	}
	directPaths := shortestPaths(root, w.newEdges, isDirect)
	allPaths := shortestPaths(root, w.newEdges, func(*LineageEdge) bool { return true })
	r := &ImpactReport{Direct: []*ImpactedField{}, Indirect: []*ImpactedField{}, PermissionsFiltered: !scope.Global}
	for _, n := range nodes {
		f, ok := n.(*Field)
		if !ok || f.ID == root {
			continue
		}
		if p, ok := directPaths[f.ID]; ok {
			r.Direct = append(r.Direct, &ImpactedField{Field: fields[f.ID], Distance: len(p), Path: p})
		} else if p, ok := allPaths[f.ID]; ok {
			r.Indirect = append(r.Indirect, &ImpactedField{Field: fields[f.ID], Distance: len(p), Path: p})
		}
	}
	jobs, err := s.impactJobs(ctx, w.newEdges)
	if err != nil {
		return nil, err
	}
	r.Jobs = jobs
	waiting := w.expandable(slices.Concat(w.pending, w.deferred, w.held))
	if len(waiting) > 0 || clamped {
		w.truncatedGap(waiting)
		r.Truncated = true
	}
	r.Gaps = w.gaps.all()
	return r, nil
}

func isDirect(e *LineageEdge) bool {
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
func shortestPaths(root string, edges []*LineageEdge, keep func(*LineageEdge) bool) map[string][]*LineageEdge {
	out := map[string][]*LineageEdge{}
	if len(edges) == 0 {
		return out
	}
	adj := map[string][]*LineageEdge{}
	for _, e := range edges {
		if keep(e) {
			adj[e.From] = append(adj[e.From], e)
		}
	}
	out[root] = []*LineageEdge{}
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

func (s *Service) impactJobs(ctx context.Context, edges []*LineageEdge) ([]*Job, error) {
	var keys []string
	for _, e := range edges {
		if e.JobKey != "" && !slices.Contains(keys, e.JobKey) {
			keys = append(keys, e.JobKey)
		}
	}
	slices.Sort(keys)
	js, err := s.store.JobsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	out := []*Job{}
	for _, k := range keys {
		if j, ok := js[k]; ok {
			out = append(out, jobOf(j, s.clock()))
		}
	}
	return out, nil
}
