package lineage

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage/walk"
)

// FlowNames are the datasets and jobs a flow's answer refers to by key (its fields' datasets, its edges' jobs), as
// named at the flow's asOf, for an export that spells names out (governance/flowexport). Every one of them passed
// the flow's permission checks; a hidden job is not among them (its edges carry no job key).
func (s *Service) FlowNames(ctx context.Context, f *api.PiiFlow) (map[string]*api.Dataset, map[string]*api.Job, error) {
	seen := map[string]bool{}
	var refs []walk.Node
	add := func(kind walk.HopKind, key string) {
		if key != "" && !seen[string(kind)+key] {
			seen[string(kind)+key] = true
			refs = append(refs, walk.Node{Kind: kind, Key: key})
		}
	}
	field := func(x *api.Field) {
		if x != nil {
			add(walk.HopDataset, x.DatasetKey)
		}
	}
	for _, o := range f.Origins {
		field(o.Field)
	}
	for _, r := range f.Reached {
		field(r.Field)
		field(r.Origin)
		for _, st := range r.Path {
			add(walk.HopJob, st.Edge.JobKey)
		}
	}
	for _, st := range f.Stops {
		field(st.Field)
		field(st.Next)
		if st.Edge != nil {
			add(walk.HopJob, st.Edge.JobKey)
		}
	}
	nodes, err := s.walker.materialise(ctx, refs, graph.Millis(f.AsOf))
	if err != nil {
		return nil, nil, api.StoreErr(err)
	}
	ds, js := map[string]*api.Dataset{}, map[string]*api.Job{}
	for _, n := range nodes {
		switch x := n.(type) {
		case *api.Dataset:
			ds[x.Key] = x
		case *api.Job:
			js[x.Key] = x
		}
	}
	return ds, js, nil
}
