package catalog

import (
	"context"
	"sort"
	"strconv"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// The governance histories (docs/adr/0082-tag-and-block-history-fields.md): Dataset.tagHistory, Field.tagHistory
// and Dataset.blockHistory answer what projection versions 6 and 7 store on the dataset node (graph.TagInterval,
// graph.BlockInterval), under the rules of Dataset.tags: the dataset must be visible (DESCRIBE), a sensitive tag
// needs VIEW_SENSITIVE on it, and an edge block naming a job or dataset the caller may not describe is left out.

// historyKey is the batch id of the dataset's own checks.
const historyKey = "dataset"

// DatasetTagHistory answers Dataset.tagHistory: every tag of the dataset and its fields, with its intervals.
func (s *Catalog) DatasetTagHistory(ctx context.Context, d *api.Dataset) (*api.TagHistory, error) {
	row, mayView, ok, err := s.historyRow(ctx, d.Key, graph.Millis(d.AsOf))
	if err != nil || !ok {
		return &api.TagHistory{Entries: []*api.TagInterval{}, PermissionsFiltered: true}, err
	}
	return s.tagHistory(ctx, row, mayView, func(graph.TagInterval, governance.Tag) bool { return true }), nil
}

// FieldTagHistory answers Field.tagHistory of one field (FieldTagHistories of one).
func (s *Catalog) FieldTagHistory(ctx context.Context, f *api.Field) (*api.TagHistory, error) {
	out, err := s.FieldTagHistories(ctx, []string{f.Key}, graph.Millis(f.AsOf))
	if err != nil {
		return nil, err
	}
	return out[f.Key], nil
}

// FieldTagHistories answers Field.tagHistory of many fields of one request at once (the resolvers' loader, ADR
// 0088): the tags of each field, matched by the path the field had when the tag was set (a renamed field keeps
// the history of its earlier names), and the dataset-level tags of its dataset (which apply to every field).
// One fields read, one datasets read (named as at t) and one policy call for all of them, whatever the count;
// each key gets an answer (an unknown field or a dataset the caller may not describe: an empty history).
func (s *Catalog) FieldTagHistories(ctx context.Context, keys []string, t int64) (map[string]*api.TagHistory, error) {
	out := make(map[string]*api.TagHistory, len(keys))
	for _, k := range keys {
		out[k] = &api.TagHistory{Entries: []*api.TagInterval{}, PermissionsFiltered: true}
	}
	fields, err := s.store.FieldsByKeys(ctx, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	var dsKeys []string
	seen := map[string]bool{}
	for _, fr := range fields {
		if !seen[fr.DatasetKey] {
			seen[fr.DatasetKey] = true
			dsKeys = append(dsKeys, fr.DatasetKey)
		}
	}
	if len(dsKeys) == 0 {
		return out, nil
	}
	rows, err := s.store.DatasetsByKeys(ctx, dsKeys, t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for k, row := range rows {
		b.Add(describeID(k), authz.PrivDescribe, permcheck.DatasetCandidates(row)...)
		b.Add(sensitiveID(k), authz.PrivViewSensitive, permcheck.DatasetCandidates(row)...)
	}
	if len(rows) > 0 {
		if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		fr, found := fields[k]
		row, ok := rows[fr.DatasetKey]
		if !found || !ok || !b.OK(describeID(fr.DatasetKey)) {
			continue
		}
		out[k] = s.tagHistory(ctx, row, b.OK(sensitiveID(fr.DatasetKey)), func(iv graph.TagInterval, t governance.Tag) bool {
			return t.Field == "" || t.Field == fr.PathAt(iv.ValidFrom)
		})
	}
	return out, nil
}

// describeID and sensitiveID are the batch ids of a dataset's DESCRIBE and VIEW_SENSITIVE checks.
func describeID(datasetKey string) string  { return "describe\x00" + datasetKey }
func sensitiveID(datasetKey string) string { return "sensitive\x00" + datasetKey }

// DatasetBlockHistory answers Dataset.blockHistory: every block on the dataset's fields, with who, why and when.
// An edge block whose job or upstream dataset the caller may not describe is left out whole (one policy call).
func (s *Catalog) DatasetBlockHistory(ctx context.Context, d *api.Dataset) (*api.BlockHistory, error) {
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	out := &api.BlockHistory{Entries: []*api.BlockInterval{}, PermissionsFiltered: !scope.Global}
	row, _, ok, err := s.historyRow(ctx, d.Key, graph.Millis(d.AsOf))
	if err != nil || !ok || len(row.BlockHistory) == 0 {
		return out, err
	}
	b := permcheck.NewBatch()
	for i, iv := range row.BlockHistory {
		if e := iv.Edge; e != nil {
			b.Add(edgeCheckID(i), authz.PrivDescribe,
				authz.Candidate{Kind: authz.KindJob, Key: e.JobKey, Namespace: e.JobNamespace, Name: e.JobName},
				authz.Candidate{Kind: authz.KindDataset, Namespace: e.Namespace, Name: e.Name})
		}
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	for i, iv := range row.BlockHistory {
		if iv.Edge != nil && !b.OK(edgeCheckID(i)) {
			continue
		}
		out.Entries = append(out.Entries, blockIntervalOf(iv))
	}
	sort.SliceStable(out.Entries, func(i, j int) bool { return blockOrder(out.Entries[i], out.Entries[j]) })
	return out, nil
}

// historyRow reads the dataset (named as at t) and checks in one policy call that the caller may describe it
// (ok) and whether it may view its sensitive tags (mayView).
func (s *Catalog) historyRow(ctx context.Context, key string, t int64) (graph.DatasetRow, bool, bool, error) {
	rows, err := s.store.DatasetsByKeys(ctx, []string{key}, t)
	if err != nil {
		return graph.DatasetRow{}, false, false, api.StoreErr(err)
	}
	row, found := rows[key]
	if !found {
		return graph.DatasetRow{}, false, false, nil
	}
	b := permcheck.NewBatch()
	b.Add(historyKey, authz.PrivDescribe, permcheck.DatasetCandidates(row)...)
	b.Add(historyKey+"/sensitive", authz.PrivViewSensitive, permcheck.DatasetCandidates(row)...)
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return graph.DatasetRow{}, false, false, err
	}
	return row, b.OK(historyKey + "/sensitive"), b.OK(historyKey), nil
}

// tagHistory renders the intervals keep selects, without the sensitive ones unless mayView; a sensitive one
// shown records the dataset in the request's audit.
func (s *Catalog) tagHistory(ctx context.Context, row graph.DatasetRow, mayView bool,
	keep func(graph.TagInterval, governance.Tag) bool) *api.TagHistory {
	set := s.gate.Settings()
	out := &api.TagHistory{Entries: []*api.TagInterval{}, PermissionsFiltered: !mayView}
	shownSensitive := false
	for _, iv := range row.TagHistory {
		t := governance.ParseTag(iv.Name)
		if !keep(iv, t) {
			continue
		}
		sensitive := set.Sensitive("", []string{iv.Name})
		if sensitive && !mayView {
			continue
		}
		shownSensitive = shownSensitive || sensitive
		out.Entries = append(out.Entries, &api.TagInterval{Name: iv.Name, Field: strOrNil(t.Field), Class: t.Class,
			Value: strOrNil(t.Value), Source: strOrNil(iv.Source), ValidFrom: graph.FromMillis(iv.ValidFrom),
			ValidTo: timeOrNil(iv.ValidTo), EventID: strOrNil(iv.EventID), By: strOrNil(iv.By), Sensitive: sensitive})
	}
	if a := authz.RequestAuditFrom(ctx); a != nil && shownSensitive {
		a.Touched(authz.Candidate{Kind: authz.KindDataset, Key: row.Key, Namespace: row.CurrentNS, Name: row.CurrentName})
	}
	return out
}

func blockIntervalOf(iv graph.BlockInterval) *api.BlockInterval {
	out := &api.BlockInterval{Field: iv.Field, By: iv.By, Reason: iv.Reason, ValidFrom: graph.FromMillis(iv.ValidFrom),
		ValidTo: timeOrNil(iv.ValidTo), EventID: strOrNil(iv.EventID)}
	if e := iv.Edge; e != nil {
		out.Edge = &api.BlockedEdge{Job: api.BlockedJob{Namespace: e.JobNamespace, Name: e.JobName},
			From: api.BlockedField{Namespace: e.Namespace, Name: e.Name, Field: e.Field}}
	}
	return out
}

// blockOrder sorts by field, field blocks before edge blocks, then edge, then start.
func blockOrder(a, b *api.BlockInterval) bool {
	ka, kb := blockSortKey(a), blockSortKey(b)
	if ka != kb {
		return ka < kb
	}
	return a.ValidFrom.Before(b.ValidFrom)
}

func blockSortKey(b *api.BlockInterval) string {
	if b.Edge == nil {
		return b.Field
	}
	e := b.Edge
	return b.Field + "\x00" + e.Job.Namespace + "\x00" + e.Job.Name + "\x00" + e.From.Namespace + "\x00" + e.From.Name + "\x00" + e.From.Field
}

func edgeCheckID(i int) string { return "edge/" + strconv.Itoa(i) }
