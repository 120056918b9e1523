package lineage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// resolvedStart is the start of a walk: the nodes the first page returns and the depth-0 frontier.
type resolvedStart struct {
	nodes   []nodeRef
	entries []frontierEntry
	// renamedFrom is set when a dataset start was found under a name that is not its own at asOf.
	renamedFrom *Alias
	// names are the start nodes' identities: the first hop checks VIEW_LINEAGE under them.
	names map[string]nodeNames
	// ident is the canonical name a dataset start was asked by; reused is set when its resolution may come from
	// the start cache and the field list was not read: enough to build the result key and check visibility, and
	// a result-tier miss resolves again (fresh) before walking.
	ident  string
	reused bool
}

func (r *resolvedStart) name(key string, n nodeNames) {
	if r.names == nil {
		r.names = map[string]nodeNames{}
	}
	r.names[key] = n
}

func directions(d Direction) []bool {
	switch d {
	case Upstream:
		return []bool{false}
	case Downstream:
		return []bool{true}
	}
	return []bool{true, false}
}

func (r *resolvedStart) add(n nodeRef, expand bool, d Direction) {
	r.nodes = append(r.nodes, n)
	if !expand {
		return
	}
	for _, down := range directions(d) {
		r.entries = append(r.entries, frontierEntry{Key: n.key, Kind: n.kind, Down: down})
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
		j, err := s.findJob(ctx, a.Start.Job.Namespace, a.Start.Job.Name)
		if err != nil {
			return r, err
		}
		r.add(nodeRef{HopJob, j.Key}, true, a.Direction)
		r.name(j.Key, nodeNames{cur: graph.NameRef{Namespace: j.Namespace, Name: j.Name}})
	case a.Start.Field != nil:
		f, ds, err := s.findField(ctx, *a.Start.Field, t)
		if err != nil {
			return r, err
		}
		r.add(nodeRef{HopField, f.Key}, true, a.Direction)
		r.name(f.Key, datasetNames(ds))
	default:
		d, binding, ident, err := s.lookupDataset(ctx, a.Start.Dataset.Namespace, a.Start.Dataset.Name, t, mode)
		if err != nil {
			return r, err
		}
		if reuse {
			r.ident, r.reused = ident, true
		}
		r.renamedFrom = resolvedFrom(binding, t)
		r.add(nodeRef{HopDataset, d.Key}, a.Granularity == GranDataset, a.Direction)
		r.name(d.Key, datasetNames(d))
		if a.Granularity == GranField && !reuse {
			return s.addFields(ctx, r, d, t, a.Direction)
		}
	}
	return r, nil
}

// addFields starts a field-level walk from every field of a dataset valid at t.
func (s *Service) addFields(ctx context.Context, r resolvedStart, ds graph.DatasetRow, t int64, d Direction) (resolvedStart, error) {
	fields, err := s.store.FieldsOf(ctx, ds.Key, t)
	if err != nil {
		return r, storeErr(err)
	}
	for _, f := range fields {
		r.add(nodeRef{HopField, f.Key}, true, d)
		r.name(f.Key, datasetNames(ds))
	}
	return r, nil
}

// datasetNames are a dataset row's identities now and at the row's asOf.
func datasetNames(d graph.DatasetRow) nodeNames {
	return nodeNames{cur: graph.NameRef{Namespace: d.CurrentNS, Name: d.CurrentName},
		at: graph.NameRef{Namespace: d.Namespace, Name: d.Name}}
}

// datasetCandidates names a dataset under its current and its asOf identity.
func datasetCandidates(d graph.DatasetRow) []authz.Candidate {
	return candidates(authz.KindDataset, d.Key, datasetNames(d))
}

// findDataset resolves a name (canonicalised like events) at t; an old name after a rename resolves to the
// renamed dataset and the binding says so. Unknown and invisible datasets are the same NOT_FOUND.
func (s *Service) findDataset(ctx context.Context, ns, name string, t int64) (graph.DatasetRow, graph.NameBinding, error) {
	row, b, _, err := s.lookupDataset(ctx, ns, name, t, startFresh)
	return row, b, err
}

// lookupDataset is findDataset; with startReuse (a lineage start about now) the name's resolution may come from the
// start cache. The visibility check runs on every call either way (in memory: the row carries its names).
func (s *Service) lookupDataset(ctx context.Context, ns, name string, t int64, mode startMode) (graph.DatasetRow, graph.NameBinding, string, error) {
	missing := notFound("dataset %s %s not found", ns, name)
	env, cns, cname, err := s.canon.Dataset(ns, name)
	if err != nil {
		return graph.DatasetRow{}, graph.NameBinding{}, "", badRequest("dataset %s %s: %v", ns, name, err)
	}
	ident := graph.DatasetIdent(env, cns, cname)
	row, binding, found, err := s.resolveDatasetName(ctx, ident, t, mode)
	if err != nil {
		return row, binding, ident, storeErr(err)
	}
	if !found {
		return row, binding, ident, missing
	}
	ok, err := s.visible(ctx, lookupCandidates(row, binding, t, cns, cname)...)
	if err == nil && !ok && mode == startReuse {
		// A reused resolution may carry names from before a rename: never deny on them.
		return s.lookupDataset(ctx, ns, name, t, startRefresh)
	}
	if err != nil || !ok {
		return row, binding, ident, firstErr(err, missing)
	}
	return row, binding, ident, nil
}

// lookupCandidates are the identities a lookup must be allowed to describe: the dataset's (now and at t) and,
// when the name asked is another one (an old name, a symlink), that name too. A name the caller may not describe
// then answers NOT_FOUND like a name that does not exist, instead of confirming which visible dataset it denotes
// (issue 13 item 13).
func lookupCandidates(row graph.DatasetRow, b graph.NameBinding, t int64, ns, name string) []authz.Candidate {
	cands := datasetCandidates(row)
	if resolvedFrom(b, t) != nil {
		cands = append(cands, authz.Candidate{Kind: authz.KindDataset, Key: row.Key, Namespace: ns, Name: name})
	}
	return cands
}

// resolveDatasetName reads which dataset ident denotes at t. With a start cache (the service has a cache
// store), startReuse takes a kept resolution and startRefresh reads and keeps a fresh one; misses are never
// kept, so a dataset created meanwhile is found on the next request. A reused resolution only ever leads
// to a cached answer recorded under the name's generation (Lineage), so a stale one is never answered from.
func (s *Service) resolveDatasetName(ctx context.Context, ident string, t int64, mode startMode) (graph.DatasetRow, graph.NameBinding, bool, error) {
	if mode == startFresh || s.starts == nil {
		return s.store.ResolveDatasetName(ctx, ident, t)
	}
	if mode == startReuse {
		if row, b, ok := s.starts.get(ident); ok {
			return row, b, true, nil
		}
	}
	row, b, found, err := s.store.ResolveDatasetName(ctx, ident, t)
	if err == nil && found {
		s.starts.put(ident, row, b)
	}
	return row, b, found, err
}

func (s *Service) findJob(ctx context.Context, ns, name string) (graph.JobRow, error) {
	missing := notFound("job %s %s not found", ns, name)
	cns, cname, err := s.canon.Job(ns, name)
	if err != nil {
		return graph.JobRow{}, badRequest("job %s %s: %v", ns, name, err)
	}
	j, found, err := s.store.JobByName(ctx, cns, cname)
	if amb := (*graph.AmbiguousJobNameError)(nil); errors.As(err, &amb) {
		return s.oneVisibleJob(ctx, amb, missing)
	}
	if err != nil {
		return j, storeErr(err)
	}
	return s.visibleJob(ctx, j, found, missing)
}

// oneVisibleJob answers a name several dbt node jobs were reported under (ADR 0027) with the one of them the
// caller may describe; none is missing, several are BAD_REQUEST naming only what the caller may see.
func (s *Service) oneVisibleJob(ctx context.Context, amb *graph.AmbiguousJobNameError, missing error) (graph.JobRow, error) {
	b := newBatch()
	for _, j := range amb.Jobs {
		b.add(j.Key, authz.PrivDescribe, authz.Candidate{Kind: authz.KindJob, Key: j.Key, Namespace: j.Namespace, Name: j.Name})
	}
	if err := b.run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return graph.JobRow{}, err
	}
	var seen []graph.JobRow
	var ids []string
	for _, j := range amb.Jobs {
		if b.ok(j.Key) {
			seen = append(seen, j)
			ids = append(ids, j.DbtUniqueID+" ("+j.DbtRole+")")
		}
	}
	switch len(seen) {
	case 0:
		return graph.JobRow{}, missing
	case 1:
		return seen[0], nil
	}
	return graph.JobRow{}, badRequest("name: job %s %s was reported for several dbt nodes (%s); ask for it with "+
		"dbtJob(namespace, uniqueId, role)", amb.Namespace, amb.Name, strings.Join(ids, ", "))
}

// visibleJob answers a job found by a lookup, or missing when it was not found or the caller may not describe it
// (the same answer).
func (s *Service) visibleJob(ctx context.Context, j graph.JobRow, found bool, missing error) (graph.JobRow, error) {
	if !found {
		return j, missing
	}
	ok, err := s.visible(ctx, authz.Candidate{Kind: authz.KindJob, Key: j.Key, Namespace: j.Namespace, Name: j.Name})
	if err != nil || !ok {
		return j, firstErr(err, missing)
	}
	return j, nil
}

// findDbtJob finds the job of a dbt node in a job namespace (docs/adr/0027-dbt-job-identity.md).
func (s *Service) findDbtJob(ctx context.Context, ns, uniqueID string, role DbtRole) (graph.JobRow, error) {
	missing := notFound("dbt job %s %s (%s) not found", ns, uniqueID, role)
	cns, _, err := s.canon.Job(ns, uniqueID)
	if err != nil {
		return graph.JobRow{}, badRequest("dbt job %s %s: %v", ns, uniqueID, err)
	}
	j, found, err := s.store.JobByDbtUniqueID(ctx, cns, uniqueID, string(role))
	if err != nil {
		return j, storeErr(err)
	}
	return s.visibleJob(ctx, j, found, missing)
}

func (s *Service) findField(ctx context.Context, ref FieldRef, t int64) (graph.FieldRow, graph.DatasetRow, error) {
	d, _, err := s.findDataset(ctx, ref.Namespace, ref.Name, t)
	if err != nil {
		return graph.FieldRow{}, d, err
	}
	f, found, err := s.store.FieldAt(ctx, d.Key, ref.Field, t)
	if err != nil {
		return f, d, storeErr(err)
	}
	if !found {
		return f, d, notFound("field %s of dataset %s %s not found at that time", ref.Field, ref.Namespace, ref.Name)
	}
	return f, d, nil
}

func firstErr(err, fallback error) error {
	if err != nil {
		return fmt.Errorf("authorize: %w", err)
	}
	return fallback
}

// resolvedFrom reports the binding a name matched when it is not the dataset's own name at t.
func resolvedFrom(b graph.NameBinding, t int64) *Alias {
	if b.Kind == graph.NamePrimary && b.ValidFrom <= t && t < b.ValidTo {
		return nil
	}
	return aliasOf(b)
}
