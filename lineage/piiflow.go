package lineage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/walk"
)

// PiiFlowArgs are the arguments of the piiFlow query.
type PiiFlowArgs struct {
	Tag   string
	From  *api.NodeRef
	Depth *int
	AsOf  *time.Time
}

// flowRequest is a checked piiFlow request.
type flowRequest struct {
	class     string
	depth     int
	clamped   bool
	t         int64
	tKey      string
	sensitive bool // the class is sensitive: its tags are shown only with VIEW_SENSITIVE
	principal authz.Principal
	scope     authz.Scope
}

// PiiFlow answers how a tag class flows along column lineage (docs/governance.md, ADR 0042): the origins (the
// fields carrying a tag of the class, within `from` or across the graph), a walk downstream from them with the
// lineage walk's budgets and per-hop permission checks, then the flow over the edges the caller may see
// (governance.Propagate). Every call is audited.
func (s *Service) PiiFlow(ctx context.Context, a PiiFlowArgs) (*api.PiiFlow, error) {
	q, err := s.checkFlow(ctx, a)
	if err != nil {
		return nil, err
	}
	if trail := authz.RequestAuditFrom(ctx); trail != nil {
		trail.Audited(fmt.Sprintf("piiFlow(tag: %q)", q.class))
	}
	origins, more, err := s.flowOrigins(ctx, q, a.From)
	if err != nil {
		return nil, err
	}
	res, err := s.flowWalk(ctx, q, origins)
	if err != nil {
		return nil, err
	}
	ans, err := s.flowAnswer(ctx, q, origins, res)
	if err != nil {
		return nil, err
	}
	if ans.Gaps, err = s.unreportedOn(ctx, q, ans.Gaps, flowFields(ans)); err != nil {
		return nil, err
	}
	if more {
		ans.Truncated = true
		ans.Gaps = append(ans.Gaps, api.Gap{Kind: api.GapTruncated, Nodes: []string{}, Edges: []string{},
			StopReasons: []api.StopReason{api.StopNodeBudget},
			Message: fmt.Sprintf("origins left out: at most %d datasets' tagged fields, and a flow without `from` reads at most %d datasets of the graph; give `from` (a field or a dataset)",
				MaxPiiFlowOrigins, maxPiiFlowScan)})
	}
	return ans, nil
}

// checkFlow validates the arguments, takes the scope and pins the instant.
func (s *Service) checkFlow(ctx context.Context, a PiiFlowArgs) (flowRequest, error) {
	q := flowRequest{class: governance.CanonicalClass(a.Tag), depth: DefaultPiiFlowDepth, principal: authz.FromContext(ctx)}
	if a.Depth != nil {
		q.depth = *a.Depth
	}
	switch {
	case q.class == "":
		return q, api.BadRequest("tag: must name a tag class (pii, pii.email, ...)")
	case len(q.class) > maxPiiFlowTagBytes:
		return q, api.BadRequest("tag: longer than %d bytes", maxPiiFlowTagBytes)
	case q.depth < 1:
		return q, api.BadRequest("depth: must be at least 1, got %d", q.depth)
	case a.From != nil && a.From.Job != nil:
		return q, api.BadRequest("from: a flow starts from a field or a dataset, not a job")
	case a.From != nil && (a.From.Field != nil) == (a.From.Dataset != nil):
		return q, api.BadRequest("from: give exactly one of dataset, field (or no from: the whole graph)")
	}
	if q.depth > MaxPiiFlowDepth {
		q.depth, q.clamped = MaxPiiFlowDepth, true
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return q, err
	}
	q.scope = scope
	q.t, q.tKey = s.asOf(a.AsOf)
	q.sensitive = s.walker.gate.Settings().Sensitive("", []string{q.class})
	return q, nil
}

// flowWalk walks downstream from the origins one hop deeper than the flow's depth (so a field at the depth
// knows whether the flow would go on), in one page with the walk's budgets and per-hop permission checks.
func (s *Service) flowWalk(ctx context.Context, q flowRequest, origins []flowOrigin) (*walk.Result, error) {
	if len(origins) == 0 {
		return &walk.Result{}, nil
	}
	rs := resolvedStart{}
	for _, o := range origins {
		rs.add(walk.Node{Kind: walk.HopField, Key: o.field.Key}, true, api.Downstream)
		rs.name(o.field.Key, walk.DatasetNames(o.dataset))
	}
	a := LineageArgs{Direction: api.Downstream, Depth: q.depth + 1, Granularity: api.GranField, MaxNodes: maxPiiFlowFields}
	spec := s.walker.spec(a, rs, q.t, q.tKey, q.principal)
	spec.OneShot, spec.MaxHops = true, q.depth+1
	res, err := walk.Run(ctx, spec, s.walker.reader, s.walker.gate, nil)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	return res, nil
}

// flowAnswer materialises the walk's fields, decides which the caller may see the tag on, propagates, and
// builds the answer.
func (s *Service) flowAnswer(ctx context.Context, q flowRequest, origins []flowOrigin, res *walk.Result) (*api.PiiFlow, error) {
	nodes, err := s.walker.materialise(ctx, res.Nodes, q.t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	fields := map[string]*api.Field{}
	for _, n := range nodes {
		if f, ok := n.(*api.Field); ok {
			fields[f.ID] = f
		}
	}
	blocked, rows, err := s.tagHidden(ctx, q, fields)
	if err != nil {
		return nil, err
	}
	explicit, err := s.flowBlocks(ctx, q.t, fields, rows)
	if err != nil {
		return nil, err
	}
	in := governance.Input{Edges: res.Edges, Depth: q.depth, Blocked: blocked, Waiting: waitingOf(res),
		NoColumn: noColumnOf(res), Explicit: explicit}
	for _, o := range origins {
		in.Origins = append(in.Origins, governance.Origin{ID: api.FieldID(o.field.Key), Rules: s.gov.RulesOf(o.class)})
	}
	flow := governance.Propagate(in)
	ans := &api.PiiFlow{Tag: q.class, AsOf: graph.FromMillis(q.t), Depth: q.depth, Gaps: res.Gaps(),
		PermissionsFiltered: !q.scope.Global, Truncated: res.Truncated || q.clamped}
	ans.Origins = originsOf(origins, fields)
	ans.Reached, ans.Stops = reachesOf(flow, fields), stopsOf(flow, fields)
	ans.Gaps = shownNoColumnGaps(ans.Gaps, flowFields(ans))
	for _, st := range ans.Stops {
		ans.Truncated = ans.Truncated || st.Reason == api.PiiStopDepth || st.Reason == api.PiiStopBudget
	}
	s.touchFlow(ctx, q, ans, rows)
	return ans, nil
}

// flowFields are the fields a flow answer shows: its origins, the fields reached and where it stopped.
func flowFields(ans *api.PiiFlow) []api.Node {
	var out []api.Node
	for _, o := range ans.Origins {
		out = append(out, o.Field)
	}
	for _, r := range ans.Reached {
		out = append(out, r.Field)
	}
	for _, st := range ans.Stops {
		out = append(out, st.Field)
	}
	return out
}

// shownNoColumnGaps keeps of the walk's NO_COLUMN_LINEAGE gaps those about a field the answer shows (an origin, a
// field reached, or where the flow stopped). The walk goes on past a stop (a masked edge, an aggregation, a block)
// to fields the tag never reaches; "unknown: no column lineage" there would be false, since the flow there is
// known: it stopped. Other gaps are kept as they are (a TRUNCATED gap says the walk, and so the flow, is partial).
func shownNoColumnGaps(gaps []api.Gap, shown []api.Node) []api.Gap {
	ids := make(map[string]bool, len(shown))
	for _, n := range shown {
		if f, ok := n.(*api.Field); ok && f != nil {
			ids[f.ID] = true
		}
	}
	out := gaps[:0:0]
	for _, g := range gaps {
		if g.Kind == api.GapNoColumnLineage && !slices.ContainsFunc(g.Nodes, func(id string) bool { return ids[id] }) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// waitingOf are the fields the walk did not expand because a budget stopped it (public ids).
func waitingOf(res *walk.Result) map[string]bool {
	out := map[string]bool{}
	if res.Next != nil {
		for _, e := range res.Next.Frontier {
			out[api.FieldID(e.Key)] = true
		}
	}
	for _, m := range res.Markers {
		out[m.Node] = true
	}
	return out
}

// noColumnOf are the fields the walk found without column lineage onward while their dataset has some.
func noColumnOf(res *walk.Result) map[string]bool {
	out := map[string]bool{}
	for _, g := range res.Gaps() {
		if g.Kind == api.GapNoColumnLineage {
			for _, n := range g.Nodes {
				out[n] = true
			}
		}
	}
	return out
}
