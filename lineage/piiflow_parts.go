package lineage

import (
	"context"
	"slices"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// flowOrigin is a field carrying a tag of the class asked: the field, its dataset, its tags of the class and
// the class whose rules it follows (the most specific of them).
type flowOrigin struct {
	field   graph.FieldRow
	dataset graph.DatasetRow
	tags    []governance.Tag
	class   string
}

// flowOrigins finds the origins: the field asked if it carries the class, the dataset's fields that do, or
// (no `from`) the tagged fields of the graph's datasets the caller may describe. With a sensitive class only
// origins whose dataset the caller may VIEW_SENSITIVE count: the others are not known to carry it. more says
// origins were left out (MaxPiiFlowOrigins).
func (s *Service) flowOrigins(ctx context.Context, q flowRequest, from *api.NodeRef) ([]flowOrigin, bool, error) {
	var cands []flowOrigin
	var more bool
	var err error
	switch {
	case from != nil && from.Field != nil:
		f, ds, ferr := s.catalog.FindField(ctx, *from.Field, q.t)
		if ferr != nil {
			return nil, false, ferr
		}
		cands = taggedFields(ds, []graph.FieldRow{f}, q.class, q.t)
	case from != nil && from.Dataset != nil:
		l, lerr := s.catalog.LookupDataset(ctx, from.Dataset.Namespace, from.Dataset.Name, q.t, s.store)
		if lerr != nil {
			return nil, false, lerr
		}
		cands, err = s.datasetOrigins(ctx, l.Row, q)
	default:
		cands, more, err = s.graphOrigins(ctx, q)
	}
	if err != nil {
		return nil, false, err
	}
	if len(cands) > MaxPiiFlowOrigins {
		cands, more = cands[:MaxPiiFlowOrigins], true
	}
	cands, err = s.sensitiveVisible(ctx, q, cands)
	return cands, more, err
}

func (s *Service) datasetOrigins(ctx context.Context, ds graph.DatasetRow, q flowRequest) ([]flowOrigin, error) {
	if len(governance.FieldTags(ds.TagsAt(q.t), q.class)) == 0 {
		return nil, nil
	}
	fs, err := s.store.FieldsOf(ctx, ds.Key, q.t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	return taggedFields(ds, fs, q.class, q.t), nil
}

// graphOrigins are the tagged fields of the datasets carrying the class that the caller may describe: the graph's
// datasets read by key in pages of maxPiiFlowScanPage, the tagged ones of each page checked in one policy call,
// until MaxPiiFlowOrigins visible datasets or maxPiiFlowScan datasets read. more says the scan stopped early (the
// answer carries a TRUNCATED gap saying so).
func (s *Service) graphOrigins(ctx context.Context, q flowRequest) ([]flowOrigin, bool, error) {
	var out []flowOrigin
	after, visible := "", 0
	for scanned := 0; scanned < maxPiiFlowScan; {
		page, err := s.store.TaggedDatasets(ctx, q.class, after, maxPiiFlowScanPage, q.t)
		if err != nil {
			return nil, false, api.StoreErr(err)
		}
		scanned, after = scanned+page.Scanned, page.Last
		b := permcheck.NewBatch()
		for _, r := range page.Rows {
			b.Add(r.Key, authz.PrivDescribe, permcheck.DatasetCandidates(r)...)
		}
		if err := b.Run(ctx, s.walker.gate, q.principal); err != nil {
			return nil, false, err
		}
		for _, r := range page.Rows {
			if !b.OK(r.Key) {
				continue
			}
			if visible == MaxPiiFlowOrigins {
				return out, true, nil
			}
			visible++
			o, err := s.datasetOrigins(ctx, r, q)
			if err != nil {
				return nil, false, err
			}
			out = append(out, o...)
		}
		if page.Scanned < maxPiiFlowScanPage {
			return out, false, nil
		}
	}
	return out, true, nil
}

// taggedFields are the fields carrying a tag of class at t: their own, or their dataset's (which applies to all).
func taggedFields(ds graph.DatasetRow, fs []graph.FieldRow, class string, t int64) []flowOrigin {
	byField := governance.FieldTags(ds.TagsAt(t), class)
	var out []flowOrigin
	for _, f := range fs {
		tags := append(slices.Clone(byField[f.Path]), byField[""]...)
		if len(tags) == 0 {
			continue
		}
		o := flowOrigin{field: f, dataset: ds, tags: tags, class: class}
		for _, t := range tags {
			if len(t.Class) > len(o.class) {
				o.class = t.Class
			}
		}
		out = append(out, o)
	}
	return out
}

// sensitiveVisible keeps, for a sensitive class, the origins whose dataset the caller may VIEW_SENSITIVE.
func (s *Service) sensitiveVisible(ctx context.Context, q flowRequest, os []flowOrigin) ([]flowOrigin, error) {
	if !q.sensitive || len(os) == 0 {
		return os, nil
	}
	b := permcheck.NewBatch()
	for _, o := range os {
		b.Add(o.dataset.Key, authz.PrivViewSensitive, permcheck.DatasetCandidates(o.dataset)...)
	}
	if err := b.Run(ctx, s.walker.gate, q.principal); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(os, func(o flowOrigin) bool { return !b.OK(o.dataset.Key) }), nil
}

// tagHidden are, for a sensitive class, the walk's fields whose dataset the caller may not VIEW_SENSITIVE: the
// flow does not enter them (their derived tag is a sensitive tag), and stops before them for PERMISSIONS.
// It returns the datasets' rows too (the audit names them).
func (s *Service) tagHidden(ctx context.Context, q flowRequest, fields map[string]*api.Field) (map[string]bool, map[string]graph.DatasetRow, error) {
	out := map[string]bool{}
	if !q.sensitive || len(fields) == 0 {
		return out, nil, nil
	}
	var keys []string
	for _, f := range fields {
		if !slices.Contains(keys, f.DatasetKey) {
			keys = append(keys, f.DatasetKey)
		}
	}
	rows, err := s.store.DatasetsByKeys(ctx, keys, q.t)
	if err != nil {
		return nil, nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for k, r := range rows {
		b.Add(k, authz.PrivViewSensitive, permcheck.DatasetCandidates(r)...)
	}
	if err := b.Run(ctx, s.walker.gate, q.principal); err != nil {
		return nil, nil, err
	}
	for id, f := range fields {
		if !b.OK(f.DatasetKey) {
			out[id] = true
		}
	}
	return out, rows, nil
}

func originsOf(os []flowOrigin, fields map[string]*api.Field) []*api.PiiOrigin {
	out := []*api.PiiOrigin{}
	for _, o := range os {
		f := fields[api.FieldID(o.field.Key)]
		if f == nil {
			continue
		}
		tags := make([]api.Tag, len(o.tags))
		for i, t := range o.tags {
			tags[i] = api.Tag{Name: t.Raw}
		}
		out = append(out, &api.PiiOrigin{Field: f, Tags: tags})
	}
	return out
}

func reachesOf(flow governance.Flow, fields map[string]*api.Field) []*api.PiiReach {
	out := []*api.PiiReach{}
	for _, r := range flow.Reached {
		f, origin := fields[r.ID], fields[r.Origin]
		if f == nil || origin == nil {
			continue
		}
		pr := &api.PiiReach{Field: f, Effect: r.Effect, Origin: origin, Distance: len(r.Path), Path: []*api.PiiStep{}}
		for _, h := range r.Path {
			pr.Path = append(pr.Path, &api.PiiStep{Edge: h.Edge, Rule: h.Step.Rule,
				Explanation: governance.Explain(h.Step, h.Edge.Transformations)})
		}
		out = append(out, pr)
	}
	return out
}

func stopsOf(flow governance.Flow, fields map[string]*api.Field) []*api.PiiStop {
	out := []*api.PiiStop{}
	for _, st := range flow.Stops {
		f := fields[st.ID]
		if f == nil {
			continue
		}
		ps := &api.PiiStop{Field: f, Reason: st.Reason, Edge: st.Edge, Message: stopMessage(st)}
		if st.Edge != nil {
			ps.Next = fields[st.Edge.To]
		}
		out = append(out, ps)
	}
	return out
}

func stopMessage(st governance.Stop) string {
	switch st.Reason {
	case api.PiiStopMasked, api.PiiStopAggregation:
		return governance.Explain(st.Step, st.Edge.Transformations)
	case api.PiiStopDepth:
		return "the flow goes on beyond the depth asked; ask with a larger depth"
	case api.PiiStopPermissions:
		return "the flow goes on into fields whose sensitive tags you may not view"
	case api.PiiStopBudget:
		return "the walk's budget stopped here; start a flow from this field to go on"
	case api.PiiStopBlocked:
		return "BLOCKED by " + st.Block.By + ": " + st.Block.Reason
	case api.PiiStopNoColumnLineage:
		return "unknown: no column lineage: this field's dataset has dataset-level lineage downstream without column lineage from this field; the tag may flow on"
	}
	return string(st.Reason)
}

// touchFlow records, for a sensitive class, the datasets the flow shows carrying the tag (origins, carried and
// aggregated reaches) in the request's audit: they are sensitive nodes (DESIGN.md, Permissions).
func (s *Service) touchFlow(ctx context.Context, q flowRequest, ans *api.PiiFlow, rows map[string]graph.DatasetRow) {
	trail := authz.RequestAuditFrom(ctx)
	if trail == nil || !q.sensitive {
		return
	}
	var keys []string
	for _, o := range ans.Origins {
		keys = append(keys, o.Field.DatasetKey)
	}
	for _, r := range ans.Reached {
		if r.Effect != api.PiiInfluenced {
			keys = append(keys, r.Field.DatasetKey)
		}
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		r := rows[k]
		trail.Touched(authz.Candidate{Kind: authz.KindDataset, Key: k, Namespace: r.CurrentNS, Name: r.CurrentName})
	}
}
