package lineage

import (
	"context"
	"errors"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/lineage/walk"
)

// resolvedStart is the start of a walk: the nodes the first page returns and the depth-0 frontier.
type resolvedStart struct {
	nodes   []walk.Node
	entries []walk.Entry
	// renamedFrom is set when a dataset start was found under a name that is not its own at asOf.
	renamedFrom *api.Alias
	// names are the start nodes' identities: the first hop checks VIEW_LINEAGE under them.
	names map[string]walk.Names
	// ident is the canonical name a dataset start was asked by; reused is set when its resolution may come from
	// the start cache and the field list was not read: enough to build the result key and check visibility, and
	// a result-tier miss resolves again (fresh) before walking.
	ident  string
	reused bool
}

func (r *resolvedStart) name(key string, n walk.Names) {
	if r.names == nil {
		r.names = map[string]walk.Names{}
	}
	r.names[key] = n
}

func directions(d api.Direction) []bool {
	switch d {
	case api.Upstream:
		return []bool{false}
	case api.Downstream:
		return []bool{true}
	}
	return []bool{true, false}
}

func (r *resolvedStart) add(n walk.Node, expand bool, d api.Direction) {
	r.nodes = append(r.nodes, n)
	if !expand {
		return
	}
	for _, down := range directions(d) {
		r.entries = append(r.entries, walk.Entry{Key: n.Key, Kind: n.Kind, Down: down})
	}
}

// startMode says how a dataset start's name is resolved.
type startMode int

const (
	// startFresh reads the resolution from Neo4j (asOf requests, cursor pages, lookups).
	startFresh startMode = iota
	// startReuse may take it from the start cache and leaves a field-level start's fields unlisted: enough for
	// the result key and the visibility check (a first page about now, cache configured).
	startReuse
	// startRefresh reads it from Neo4j and keeps it in the start cache (a reused start whose answer missed).
	startRefresh
)

// resolveStart finds the start node(s); see startMode for dataset starts.
func (s *Service) resolveStart(ctx context.Context, a LineageArgs, t int64, mode startMode) (resolvedStart, error) {
	reuse := mode == startReuse
	var r resolvedStart
	switch {
	case a.Start.Job != nil:
		j, err := s.catalog.FindJob(ctx, a.Start.Job.Namespace, a.Start.Job.Name)
		if err != nil {
			return r, err
		}
		r.add(walk.Node{Kind: walk.HopJob, Key: j.Key}, true, a.Direction)
		r.name(j.Key, walk.Names{Current: graph.NameRef{Namespace: j.Namespace, Name: j.Name}})
	case a.Start.Field != nil:
		f, ds, err := s.catalog.FindField(ctx, *a.Start.Field, t)
		if err != nil {
			return r, err
		}
		r.add(walk.Node{Kind: walk.HopField, Key: f.Key}, true, a.Direction)
		r.name(f.Key, walk.DatasetNames(ds))
	default:
		l, err := s.lookupStart(ctx, a.Start.Dataset.Namespace, a.Start.Dataset.Name, t, mode)
		if err != nil {
			return r, err
		}
		d := l.Row
		if reuse {
			r.ident, r.reused = l.Ident, true
		}
		r.renamedFrom = l.RenamedFrom
		r.add(walk.Node{Kind: walk.HopDataset, Key: d.Key}, a.Granularity == api.GranDataset, a.Direction)
		r.name(d.Key, walk.DatasetNames(d))
		if a.Granularity == api.GranField && !reuse {
			return s.addFields(ctx, r, d, t, a.Direction)
		}
	}
	return r, nil
}

// addFields starts a field-level walk from every field of a dataset valid at t.
func (s *Service) addFields(ctx context.Context, r resolvedStart, ds graph.DatasetRow, t int64, d api.Direction) (resolvedStart, error) {
	fields, err := s.store.FieldsOf(ctx, ds.Key, t)
	if err != nil {
		return r, api.StoreErr(err)
	}
	for _, f := range fields {
		r.add(walk.Node{Kind: walk.HopField, Key: f.Key}, true, d)
		r.name(f.Key, walk.DatasetNames(ds))
	}
	return r, nil
}

// lookupStart resolves a dataset start's name (catalog.LookupDataset: canonicalised, visible or NOT_FOUND);
// with startReuse (a first page about now) its resolution may come from the start cache. A reused resolution may
// carry names from before a rename: a denial on it is never final, the name is resolved again from Neo4j.
func (s *Service) lookupStart(ctx context.Context, ns, name string, t int64, mode startMode) (catalog.Lookup, error) {
	names := &startNames{store: s.store, starts: s.starts, mode: mode}
	l, err := s.catalog.LookupDataset(ctx, ns, name, t, names)
	if err != nil && names.reused && errors.Is(err, api.ErrNotFound) {
		return s.lookupStart(ctx, ns, name, t, startRefresh)
	}
	return l, err
}

// startNames resolves start names through the start cache (catalog.NameResolver). With a start cache (the
// service has a cache store), startReuse takes a kept resolution and startRefresh reads and keeps a fresh one;
// misses are never kept, so a dataset created meanwhile is found on the next request. A reused resolution only
// ever leads to a cached answer recorded under the name's generation (Lineage), so a stale one is never answered
// from.
type startNames struct {
	store  *catalogread.Store
	starts *startCache
	mode   startMode
	reused bool // the resolution came from the start cache
}

// ResolveDatasetName reads which dataset ident denotes at t.
func (n *startNames) ResolveDatasetName(ctx context.Context, ident string, t int64) (graph.DatasetRow, graph.NameBinding, bool, error) {
	if n.mode == startFresh || n.starts == nil {
		return n.store.ResolveDatasetName(ctx, ident, t)
	}
	if n.mode == startReuse {
		if row, b, ok := n.starts.get(ident); ok {
			n.reused = true
			return row, b, true, nil
		}
	}
	row, b, found, err := n.store.ResolveDatasetName(ctx, ident, t)
	if err == nil && found {
		n.starts.put(ident, row, b)
	}
	return row, b, found, err
}
