package lineage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// LineageArgs are the arguments of the lineage query.
type LineageArgs struct {
	Start            api.NodeRef
	Direction        api.Direction
	Depth            int
	Granularity      api.Granularity
	AsOf             *time.Time
	Evidence         []api.EvidenceKind
	IncludeAttempted bool
	MaxNodes         int
	After            string
	// Transformations filters the column edges of a FIELD walk (ADR 0055); nil crosses every edge.
	Transformations *api.TransformationFilter
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
		return a, api.BadRequest("start: give exactly one of dataset, field, job")
	case a.Depth < 1:
		return a, api.BadRequest("depth: must be at least 1, got %d", a.Depth)
	case a.MaxNodes < 0 || a.MaxNodes > s.cfg.MaxNodesCap:
		return a, api.BadRequest("maxNodes: must be 1..%d, got %d", s.cfg.MaxNodesCap, a.MaxNodes)
	case a.Granularity == api.GranField && a.Start.Job != nil:
		return a, api.BadRequest("granularity FIELD needs a field or dataset start node")
	case a.Granularity == api.GranDataset && a.Start.Field != nil:
		return a, api.BadRequest("a field start node needs granularity FIELD")
	case !a.Transformations.Empty() && a.Granularity != api.GranField:
		return a, api.BadRequest("transformations: filters column edges, it needs granularity FIELD")
	}
	if err := checkTransformations(a.Transformations); err != nil {
		return a, err
	}
	if a.Direction == "" {
		a.Direction = api.Both
	}
	if a.Granularity == "" {
		a.Granularity = api.GranDataset
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
	if tf := a.Transformations.Canonical(); tf != "" {
		fmt.Fprintf(&b, "|tf:%s", tf)
	}
	return digest(b.String())
}

// Lineage answers one page of lineage around a start node: check the arguments, take the caller's scope, read
// the cursor, resolve the start, answer (the walk, behind the results tier), then bind the continuation to the
// caller.
func (s *Service) Lineage(ctx context.Context, a LineageArgs) (*api.LineageGraph, error) {
	a, err := s.check(a)
	if err != nil {
		return nil, err
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.readCursor(a, authz.FromContext(ctx), scope)
	if err != nil {
		return nil, err
	}
	if q.start, err = s.resolveStart(ctx, a, q.t, s.startMode(q)); err != nil {
		return nil, err
	}
	pg, err := s.answerer.answer(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := s.bindCursor(pg, q.principal, a); err != nil {
		return nil, err
	}
	markResolvedFrom(pg.graph, pg.start)
	return pg.graph, nil
}

// readCursor pins the request's instant: the asOf asked (or now), or the one a continuation's cursor carries.
func (s *Service) readCursor(a LineageArgs, p authz.Principal, scope authz.Scope) (request, error) {
	q := request{args: a, principal: p, scope: scope}
	q.t, q.tKey = s.asOf(a.AsOf)
	if a.After == "" {
		return q, nil
	}
	st, err := s.cursor.decode(a.After, digest(p.Subject), digestArgs(a))
	if err != nil {
		return q, err
	}
	q.st, q.t, q.tKey = &st, st.AsOf, itoa64(st.AsOf)
	return q, nil
}

// startMode: a first page about now, with a cache, may take its start's resolution from the start cache.
func (s *Service) startMode(q request) startMode {
	if s.starts != nil && q.args.AsOf == nil && q.st == nil {
		return startReuse
	}
	return startFresh
}

// bindCursor gives a truncated page its cursor: the continuation bound to the caller and signed.
func (s *Service) bindCursor(pg page, p authz.Principal, a LineageArgs) error {
	if pg.next == nil {
		return nil
	}
	st := *pg.next
	st.Subject, st.Args = digest(p.Subject), digestArgs(a)
	cur, err := s.cursor.encode(st)
	if err != nil {
		return err
	}
	pg.graph.Truncated, pg.graph.Cursor = true, &cur
	return nil
}

// markResolvedFrom says, on the start node of a first page, that it was found under another name.
func markResolvedFrom(g *api.LineageGraph, start resolvedStart) {
	if start.renamedFrom == nil || len(g.Nodes) == 0 {
		return
	}
	if d, ok := g.Nodes[0].(*api.Dataset); ok && d.Key == start.nodes[0].Key {
		d.ResolvedFrom = start.renamedFrom
	}
}

// checkTransformations rejects a filter kind naming an empty subtype (leave the subtype out for every subtype).
func checkTransformations(f *api.TransformationFilter) error {
	if f == nil {
		return nil
	}
	for _, list := range []struct {
		name string
		ks   []api.TransformationKind
	}{{"only", f.Only}, {"exclude", f.Exclude}} {
		name := list.name
		for i, k := range list.ks {
			if k.Subtype != nil && strings.TrimSpace(*k.Subtype) == "" {
				return api.BadRequest("transformations.%s[%d].subtype: empty; leave it out to match every subtype of %s", name, i, k.Type)
			}
		}
	}
	return nil
}
