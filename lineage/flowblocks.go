package lineage

import (
	"context"
	"errors"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
)

// flowBlocks are the explicit governance blocks (Dataset.blockHistory, ADR 0067) in force at t on the fields a
// flow materialised: a field block by the field's id; an edge block by its target field, its job's key and its
// upstream field (matched by the upstream dataset's name at t or now, and the path). rows are the fields'
// datasets when the caller read them already (nil: read here). A block on a field the flow did not reach cannot
// change it and is not looked at. An edge block names its job by namespace and name (stored with JobKey of them);
// a dbt node's job is keyed by its unique_id (ADR 0027), so the name is also looked up as the catalog's
// job(namespace, name) finds it (any name the node's job was reported under) and the edge matched by that job's
// key too (ADR 0082).
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
	jobKeys := map[[2]string][]string{} // (job namespace, name) -> the keys an edge block through it matches
	keysOf := func(e *graph.BlockEdge) ([]string, error) {
		n := [2]string{e.JobNamespace, e.JobName}
		if ks, ok := jobKeys[n]; ok {
			return ks, nil
		}
		ks := []string{e.JobKey}
		j, found, err := s.store.JobByName(ctx, e.JobNamespace, e.JobName)
		var amb *graph.AmbiguousJobNameError
		if err != nil && !errors.As(err, &amb) {
			return nil, api.StoreErr(err)
		}
		if found && j.Key != e.JobKey { // unambiguous only: a name two dbt nodes share names neither
			ks = append(ks, j.Key)
		}
		jobKeys[n] = ks
		return ks, nil
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
				from, ok := byPath[[2]string{uk, b.Edge.Field}]
				if !ok {
					continue
				}
				jks, err := keysOf(b.Edge)
				if err != nil {
					return out, err
				}
				for _, jk := range jks {
					out.Edges[governance.EdgeRef{From: from, To: to, JobKey: jk}] = bl
				}
			}
		}
	}
	return out, nil
}
