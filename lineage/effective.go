package lineage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
	"github.com/headwater-data/headwater/lineage/walk"
)

// EffectiveArgs are the arguments of Field.effectiveTags, Dataset.effectiveTags and Dataset.sensitivity: the
// instant (the node's own asOf when nil), the depth upstream (DefaultPiiFlowDepth when nil) and whether INFLUENCED
// entries (an INDIRECT step from a carrying field) are listed.
type EffectiveArgs struct {
	AsOf      time.Time
	Depth     *int
	Influence bool
}

// effectiveRun is one effective-tags computation: the targets (fields of one dataset), what the upstream walk
// found, and the caller's sensitive view.
type effectiveRun struct {
	q        flowRequest
	ds       graph.DatasetRow
	targets  []graph.FieldRow
	fields   map[string]*api.Field       // public id -> field, every field of the walk
	rows     map[string]graph.DatasetRow // dataset key -> row
	viewSens map[string]bool             // dataset key -> the caller may VIEW_SENSITIVE
	blocked  map[string]bool             // field public id -> its dataset is not VIEW_SENSITIVE for the caller
	res      *walk.Result
	sens     func(class string) bool
}

// FieldEffectiveTags answers Field.effectiveTags: the field's own tags and those derived into it along column
// lineage upstream, by the piiFlow rules (ADR 0055).
func (s *Service) FieldEffectiveTags(ctx context.Context, f *api.Field, a EffectiveArgs) (*api.EffectiveTags, error) {
	r, err := s.effectiveOf(ctx, f.DatasetKey, f.Key, a)
	if err != nil {
		return nil, err
	}
	out := r.answer(ctx, s, a, false)
	if out.Gaps, err = s.unreportedOn(ctx, r.q, out.Gaps, tagNodes(f, out.Tags)); err != nil {
		return nil, err
	}
	return out, nil
}

// DatasetEffectiveTags answers Dataset.effectiveTags: the dataset's own tags and, per field, the tags derived into
// it along column lineage upstream.
func (s *Service) DatasetEffectiveTags(ctx context.Context, d *api.Dataset, a EffectiveArgs) (*api.EffectiveTags, error) {
	r, err := s.effectiveOf(ctx, d.Key, "", a)
	if err != nil {
		return nil, err
	}
	out := r.answer(ctx, s, a, true)
	if out.Gaps, err = s.unreportedOn(ctx, r.q, out.Gaps, tagNodes(d, out.Tags)); err != nil {
		return nil, err
	}
	return out, nil
}

// DatasetSensitivity answers Dataset.sensitivity: the dataset's sensitive tags (dataset-level) and the fields
// carrying or deriving a sensitive tag, each explained; nothing sensitive without VIEW_SENSITIVE on the dataset.
func (s *Service) DatasetSensitivity(ctx context.Context, d *api.Dataset, a EffectiveArgs) (*api.Sensitivity, error) {
	a.Influence = false
	r, err := s.effectiveOf(ctx, d.Key, "", a)
	if err != nil {
		return nil, err
	}
	eff := r.answer(ctx, s, a, true)
	if eff.Gaps, err = s.unreportedOn(ctx, r.q, eff.Gaps, tagNodes(d, sensitiveOnly(eff.Tags))); err != nil {
		return nil, err
	}
	out := &api.Sensitivity{AsOf: eff.AsOf, ViewSensitive: r.viewSens[d.Key], Partial: eff.Partial, Gaps: eff.Gaps,
		PermissionsFiltered: eff.PermissionsFiltered, DatasetTags: []*api.EffectiveTag{}, Fields: []*api.SensitiveField{}}
	byField := map[string]*api.SensitiveField{}
	for _, t := range eff.Tags {
		if !t.Sensitive {
			continue
		}
		out.Sensitive = true
		if t.Field == nil {
			out.DatasetTags = append(out.DatasetTags, t)
			continue
		}
		sf := byField[t.Field.ID]
		if sf == nil {
			sf = &api.SensitiveField{Field: t.Field}
			byField[t.Field.ID] = sf
			out.Fields = append(out.Fields, sf)
		}
		sf.Tags = append(sf.Tags, t)
	}
	return out, nil
}

// tagNodes are what an effective-tags answer is about: the node asked and the origins of the tags it lists.
func tagNodes(asked api.Node, tags []*api.EffectiveTag) []api.Node {
	out := []api.Node{asked}
	for _, t := range tags {
		if t.Origin != nil {
			out = append(out, t.Origin)
		}
	}
	return out
}

// sensitiveOnly are the tags a sensitivity answer lists.
func sensitiveOnly(tags []*api.EffectiveTag) []*api.EffectiveTag {
	var out []*api.EffectiveTag
	for _, t := range tags {
		if t.Sensitive {
			out = append(out, t)
		}
	}
	return out
}

// effectiveOf walks upstream from the target fields (one field, or every field of the dataset at the instant) and
// reads what judging the origins needs: the walk's fields, their datasets' rows and the caller's VIEW_SENSITIVE.
func (s *Service) effectiveOf(ctx context.Context, datasetKey, fieldKey string, a EffectiveArgs) (*effectiveRun, error) {
	q := flowRequest{depth: DefaultPiiFlowDepth, principal: authz.FromContext(ctx)}
	if a.Depth != nil {
		q.depth = *a.Depth
	}
	if q.depth < 1 {
		return nil, api.BadRequest("depth: must be at least 1, got %d", q.depth)
	}
	if q.depth > MaxPiiFlowDepth {
		q.depth, q.clamped = MaxPiiFlowDepth, true
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	at := a.AsOf
	q.scope = scope
	q.t, q.tKey = s.asOf(&at)
	set := s.walker.gate.Settings()
	r := &effectiveRun{q: q, sens: func(c string) bool { return set.Sensitive("", []string{c}) }}
	rows, err := s.store.DatasetsByKeys(ctx, []string{datasetKey}, q.t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	ds, ok := rows[datasetKey]
	if !ok {
		return nil, api.NotFound("dataset")
	}
	r.ds = ds
	fs, err := s.store.FieldsOf(ctx, datasetKey, q.t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	for _, f := range fs {
		if fieldKey == "" || f.Key == fieldKey {
			r.targets = append(r.targets, f)
		}
	}
	if err := r.walkUp(ctx, s); err != nil {
		return nil, err
	}
	return r, r.readTags(ctx, s)
}

// walkUp runs one page of the walk upstream from the targets at field granularity, to the depth, with the
// walk's budgets and per-hop permission checks (what the caller may not see is not in the result).
func (r *effectiveRun) walkUp(ctx context.Context, s *Service) error {
	r.res = &walk.Result{}
	if len(r.targets) == 0 {
		return nil
	}
	rs := resolvedStart{}
	for _, f := range r.targets {
		rs.add(walk.Node{Kind: walk.HopField, Key: f.Key}, true, api.Upstream)
		rs.name(f.Key, walk.DatasetNames(r.ds))
	}
	a := LineageArgs{Direction: api.Upstream, Depth: r.q.depth, Granularity: api.GranField, MaxNodes: maxPiiFlowFields}
	spec := s.walker.spec(a, rs, r.q.t, r.q.tKey, r.q.principal)
	spec.OneShot, spec.MaxHops = true, r.q.depth
	res, err := walk.Run(ctx, spec, s.walker.reader, s.walker.gate, nil)
	if err != nil {
		return api.StoreErr(err)
	}
	r.res = res
	return nil
}

// readTags materialises the walk's fields, reads their datasets' rows and, when any of them carries a sensitive
// tag, which of them the caller may VIEW_SENSITIVE (one policy call).
func (r *effectiveRun) readTags(ctx context.Context, s *Service) error {
	nodes, err := s.walker.materialise(ctx, r.res.Nodes, r.q.t)
	if err != nil {
		return api.StoreErr(err)
	}
	r.fields = map[string]*api.Field{}
	keys := []string{r.ds.Key}
	for _, n := range nodes {
		if f, ok := n.(*api.Field); ok {
			r.fields[f.ID] = f
			keys = append(keys, f.DatasetKey)
		}
	}
	slices.Sort(keys)
	if r.rows, err = s.store.DatasetsByKeys(ctx, slices.Compact(keys), r.q.t); err != nil {
		return api.StoreErr(err)
	}
	r.viewSens, r.blocked = map[string]bool{}, map[string]bool{}
	b := permcheck.NewBatch()
	for k, row := range r.rows {
		b.Add(k, authz.PrivViewSensitive, permcheck.DatasetCandidates(row)...)
	}
	if err := b.Run(ctx, s.walker.gate, r.q.principal); err != nil {
		return err
	}
	for k := range r.rows {
		r.viewSens[k] = b.OK(k)
	}
	for id, f := range r.fields {
		if !r.viewSens[f.DatasetKey] {
			r.blocked[id] = true
		}
	}
	return nil
}

// originGroup is one field's own tags of one class: an origin of a derived tag.
type originGroup struct {
	id    string
	class string
	tags  []governance.Tag
}

// ownTags are a field's own tags (its field tags and its dataset's dataset-level ones) the caller may see, by
// class: a sensitive class only with VIEW_SENSITIVE on the dataset.
func (r *effectiveRun) ownTags(f *api.Field) []originGroup {
	row, ok := r.rows[f.DatasetKey]
	if !ok {
		return nil
	}
	var out []originGroup
	for _, raw := range row.TagsAt(r.q.t) {
		t := governance.ParseTag(raw)
		if (t.Field != "" && t.Field != f.Path) || t.Class == "" || (r.sens(t.Class) && !r.viewSens[f.DatasetKey]) {
			continue
		}
		i := slices.IndexFunc(out, func(g originGroup) bool { return g.class == t.Class })
		if i < 0 {
			out = append(out, originGroup{id: f.ID, class: t.Class})
			i = len(out) - 1
		}
		out[i].tags = append(out[i].tags, t)
	}
	return out
}

// answer judges every origin of the walk (a flow of its class from it alone, over the walk's edges, entering no
// field whose sensitive tags the caller may not view) and lists the targets' own and derived tags.
func (r *effectiveRun) answer(ctx context.Context, s *Service, a EffectiveArgs, datasetLevel bool) *api.EffectiveTags {
	out := &api.EffectiveTags{AsOf: graph.FromMillis(r.q.t), Depth: r.q.depth, Tags: []*api.EffectiveTag{},
		Gaps: r.res.Gaps(), PermissionsFiltered: !r.q.scope.Global, Partial: r.res.Truncated || r.q.clamped}
	targets := map[string]*api.Field{}
	for _, f := range r.targets {
		if tf := r.fields[api.FieldID(f.Key)]; tf != nil {
			targets[tf.ID] = tf
		}
	}
	if datasetLevel {
		out.Tags = append(out.Tags, r.datasetTags()...)
	}
	var origins []originGroup
	for _, id := range sortedFieldIDs(r.fields) {
		f := r.fields[id]
		for _, g := range r.ownTags(f) {
			if tf := targets[id]; tf != nil {
				out.Tags = append(out.Tags, r.facetTags(tf, g, datasetLevel)...)
			}
			origins = append(origins, g)
		}
	}
	if len(origins) > maxEffectiveOrigins {
		origins, out.Partial = origins[:maxEffectiveOrigins], true
		out.Gaps = append(out.Gaps, api.Gap{Kind: api.GapTruncated, Nodes: []string{}, Edges: []string{},
			StopReasons: []api.StopReason{api.StopNodeBudget},
			Message:     fmt.Sprintf("more than %d tagged fields upstream: only the first %d (by id) were judged; ask a single field's effectiveTags", maxEffectiveOrigins, maxEffectiveOrigins)})
	}
	explicit, err := s.flowBlocks(ctx, r.q.t, r.fields, nil)
	if err != nil { // the blocks could not be read: no derived tag is claimed without them
		out.Partial = true
		origins = nil
	}
	for _, g := range origins {
		in := governance.Input{Origins: []governance.Origin{{ID: g.id, Rules: s.gov.RulesOf(g.class)}}, Edges: r.res.Edges,
			Depth: r.q.depth, Explicit: explicit}
		if r.sens(g.class) {
			in.Blocked = r.blocked
		}
		for _, reach := range governance.Propagate(in).Reached {
			tf := targets[reach.ID]
			if tf == nil || (reach.Effect == api.PiiInfluenced && !a.Influence) {
				continue
			}
			out.Tags = append(out.Tags, r.derivedTag(tf, g, reach))
		}
	}
	sortEffective(out.Tags)
	r.touch(ctx, out.Tags)
	return out
}

// datasetTags are the dataset-level tags of the dataset asked, listed once with no field.
func (r *effectiveRun) datasetTags() []*api.EffectiveTag {
	var out []*api.EffectiveTag
	for _, raw := range r.ds.TagsAt(r.q.t) {
		t := governance.ParseTag(raw)
		if t.Field != "" || t.Class == "" || (r.sens(t.Class) && !r.viewSens[r.ds.Key]) {
			continue
		}
		out = append(out, &api.EffectiveTag{Tag: api.Tag{Name: t.Raw}, Class: t.Class, Source: api.TagFromFacet,
			Effect: api.PiiCarried, Sensitive: r.sens(t.Class), OriginTag: api.Tag{Name: t.Raw}, Path: []*api.PiiStep{},
			Explanation: "reported by the dataset's owners (tags facet) for the whole dataset: it applies to every field"})
	}
	return out
}

// facetTags are a target's own tags of one class; with datasetLevel the dataset-level ones are listed once by
// datasetTags, not per field.
func (r *effectiveRun) facetTags(f *api.Field, g originGroup, datasetLevel bool) []*api.EffectiveTag {
	var out []*api.EffectiveTag
	for _, t := range g.tags {
		why := "reported by the dataset's owners (tags facet) on this field"
		if t.Field == "" {
			if datasetLevel {
				continue
			}
			why = "reported by the dataset's owners (tags facet) for the whole dataset: it applies to every field"
		}
		out = append(out, &api.EffectiveTag{Field: f, Tag: api.Tag{Name: t.Raw}, Class: t.Class, Source: api.TagFromFacet,
			Effect: api.PiiCarried, Sensitive: r.sens(t.Class), Origin: f, OriginTag: api.Tag{Name: t.Raw},
			Path: []*api.PiiStep{}, Explanation: why})
	}
	return out
}

// derivedTag is a tag derived into a target from an origin, with the path and the rule at each step.
func (r *effectiveRun) derivedTag(tf *api.Field, g originGroup, reach governance.Reach) *api.EffectiveTag {
	origin := r.fields[g.id]
	raws := make([]string, len(g.tags))
	for i, t := range g.tags {
		raws[i] = t.Raw
	}
	et := &api.EffectiveTag{Field: tf, Tag: api.Tag{Name: g.class}, Class: g.class, Source: api.TagDerived,
		Effect: reach.Effect, Sensitive: r.sens(g.class), Origin: origin, OriginTag: api.Tag{Name: raws[0]},
		Distance: len(reach.Path), Path: []*api.PiiStep{}}
	rules := make([]string, len(reach.Path))
	for i, h := range reach.Path {
		et.Path = append(et.Path, &api.PiiStep{Edge: h.Edge, Rule: h.Step.Rule, Explanation: governance.Explain(h.Step, h.Edge.Transformations)})
		rules[i] = string(h.Step.Rule)
	}
	how := map[api.PiiEffect]string{api.PiiCarried: "carried", api.PiiAggregated: "carried as aggregated",
		api.PiiInfluenced: "influence only (an INDIRECT step: not the tag itself)"}[reach.Effect]
	et.Explanation = fmt.Sprintf("derived from %s.%s (tag %s) over %d column step(s) (%s): %s",
		r.rows[origin.DatasetKey].Name, origin.Path, strings.Join(raws, ", "), len(reach.Path), strings.Join(rules, " > "), how)
	return et
}

func sortedFieldIDs(m map[string]*api.Field) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sortEffective orders entries by field (dataset-level first), own before derived, strongest effect, class,
// distance, origin.
func sortEffective(ts []*api.EffectiveTag) {
	rank := map[api.PiiEffect]int{api.PiiCarried: 0, api.PiiAggregated: 1, api.PiiInfluenced: 2}
	key := func(t *api.EffectiveTag) string {
		f, o := "", ""
		if t.Field != nil {
			f = "\x01" + t.Field.Path
		}
		if t.Origin != nil {
			o = t.Origin.ID
		}
		return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%04d\x00%s\x00%s", f, t.Source, rank[t.Effect], t.Class, t.Distance, o, t.Tag.Name)
	}
	slices.SortStableFunc(ts, func(a, b *api.EffectiveTag) int { return strings.Compare(key(a), key(b)) })
}

// touch records in the request's audit the datasets whose sensitive tags the answer shows (the fields' and the
// origins'): they are sensitive nodes.
func (r *effectiveRun) touch(ctx context.Context, ts []*api.EffectiveTag) {
	trail := authz.RequestAuditFrom(ctx)
	if trail == nil {
		return
	}
	var keys []string
	for _, t := range ts {
		if !t.Sensitive || t.Effect == api.PiiInfluenced {
			continue
		}
		keys = append(keys, r.ds.Key)
		if t.Origin != nil {
			keys = append(keys, t.Origin.DatasetKey)
		}
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		row := r.rows[k]
		trail.Touched(authz.Candidate{Kind: authz.KindDataset, Key: k, Namespace: row.CurrentNS, Name: row.CurrentName})
	}
}
