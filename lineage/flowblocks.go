package lineage

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
)

// flowBlocks are the explicit governance blocks (Dataset.blockHistory, ADR 0067) in force at t on the fields a
// flow materialised: a field block by the field's id; an edge block by its target field, its job's key and its
// upstream field (matched by the upstream dataset's name at t or now, and the path). rows are the fields'
// datasets when the caller read them already (nil: read here). A block on a field the flow did not reach cannot
// change it and is not looked at.
func (s *Service) flowBlocks(ctx context.Context, t int64, fields map[string]*api.Field, rows map[string]graph.DatasetRow) (governance.Blocks, error) {
	out := governance.Blocks{Fields: map[string]governance.Block{}, Edges: map[governance.EdgeRef]governance.Block{}}
	if len(fields) == 0 {
		return out, nil
	}
	if rows == nil {
		var keys []string
		seen := map[string]bool{}
		for _, f := range fields {
			if !seen[f.DatasetKey] {
				seen[f.DatasetKey] = true
				keys = append(keys, f.DatasetKey)
			}
		}
		var err error
		if rows, err = s.store.DatasetsByKeys(ctx, keys, t); err != nil {
			return out, api.StoreErr(err)
		}
	}
	byPath := map[[2]string]string{} // (dataset key, path) -> field id
	for id, f := range fields {
		byPath[[2]string{f.DatasetKey, f.Path}] = id
	}
	named := func(ns, name string) []string { // dataset keys of the flow's datasets with this name
		var ks []string
		for k, r := range rows {
			if (r.Namespace == ns && r.Name == name) || (r.CurrentNS == ns && r.CurrentName == name) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	for k, r := range rows {
		for _, b := range r.BlocksAt(t) {
			to, ok := byPath[[2]string{k, b.Field}]
			if !ok {
				continue
			}
			bl := governance.Block{By: b.By, Reason: b.Reason}
			if b.Edge == nil {
				out.Fields[to] = bl
				continue
			}
			for _, uk := range named(b.Edge.Namespace, b.Edge.Name) {
				if from, ok := byPath[[2]string{uk, b.Edge.Field}]; ok {
					out.Edges[governance.EdgeRef{From: from, To: to, JobKey: b.Edge.JobKey}] = bl
				}
			}
		}
	}
	return out, nil
}
