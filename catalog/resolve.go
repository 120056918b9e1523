package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// NameResolver reads which dataset a canonical identifier denotes at t (graph.Store; lineage's start cache
// decorates it for lineage starts about now).
type NameResolver interface {
	ResolveDatasetName(ctx context.Context, ident string, t int64) (graph.DatasetRow, graph.NameBinding, bool, error)
}

// Lookup is a dataset name resolved for a visible dataset: its row at t, the binding the name matched, the
// alias it was found under when that is not the dataset's own name at t, and the canonical identifier asked.
type Lookup struct {
	Row         graph.DatasetRow
	Binding     graph.NameBinding
	RenamedFrom *api.Alias
	Ident       string
}

// findDataset resolves a name (canonicalised like events) at t; an old name after a rename resolves to the
// renamed dataset and the binding says so. Unknown and invisible datasets are the same NOT_FOUND.
func (s *Catalog) findDataset(ctx context.Context, ns, name string, t int64) (graph.DatasetRow, graph.NameBinding, error) {
	l, err := s.LookupDataset(ctx, ns, name, t, s.store)
	return l.Row, l.Binding, err
}

// LookupDataset is findDataset reading the name's resolution through names (a lineage start about now may take
// it from the start cache). The visibility check runs on every call either way (in memory: the row carries its
// names), and its denial is audited.
func (s *Catalog) LookupDataset(ctx context.Context, ns, name string, t int64, names NameResolver) (Lookup, error) {
	missing := api.NotFound("dataset %s %s not found", ns, name)
	env, cns, cname, err := s.canon.Dataset(ns, name)
	if err != nil {
		return Lookup{}, api.BadRequest("dataset %s %s: %v", ns, name, err)
	}
	ident := graph.DatasetIdent(env, cns, cname)
	row, binding, found, err := names.ResolveDatasetName(ctx, ident, t)
	l := Lookup{Row: row, Binding: binding, Ident: ident}
	if err != nil {
		return l, api.StoreErr(err)
	}
	if !found {
		return l, missing
	}
	ok, err := s.visible(ctx, lookupCandidates(row, binding, t, cns, cname)...)
	if err != nil || !ok {
		return l, firstErr(err, missing)
	}
	l.RenamedFrom = resolvedFrom(binding, t)
	return l, nil
}

// lookupCandidates are the identities a lookup must be allowed to describe: the dataset's (now and at t) and,
// when the name asked is another one (an old name, a symlink), that name too. A name the caller may not describe
// then answers NOT_FOUND like a name that does not exist, instead of confirming which visible dataset it denotes
// (issue 13 item 13).
func lookupCandidates(row graph.DatasetRow, b graph.NameBinding, t int64, ns, name string) []authz.Candidate {
	cands := permcheck.DatasetCandidates(row)
	if resolvedFrom(b, t) != nil {
		cands = append(cands, authz.Candidate{Kind: authz.KindDataset, Key: row.Key, Namespace: ns, Name: name})
	}
	return cands
}

// FindJob resolves a job name (canonicalised like events); unknown and invisible jobs are the same NOT_FOUND.
func (s *Catalog) FindJob(ctx context.Context, ns, name string) (graph.JobRow, error) {
	missing := api.NotFound("job %s %s not found", ns, name)
	cns, cname, err := s.canon.Job(ns, name)
	if err != nil {
		return graph.JobRow{}, api.BadRequest("job %s %s: %v", ns, name, err)
	}
	j, found, err := s.store.JobByName(ctx, cns, cname)
	if amb := (*graph.AmbiguousJobNameError)(nil); errors.As(err, &amb) {
		return s.oneVisibleJob(ctx, amb, missing)
	}
	if err != nil {
		return j, api.StoreErr(err)
	}
	return s.visibleJob(ctx, j, found, missing)
}

// oneVisibleJob answers a name several dbt node jobs were reported under (ADR 0027) with the one of them the
// caller may describe; none is missing, several are BAD_REQUEST naming only what the caller may see.
func (s *Catalog) oneVisibleJob(ctx context.Context, amb *graph.AmbiguousJobNameError, missing error) (graph.JobRow, error) {
	b := permcheck.NewBatch()
	for _, j := range amb.Jobs {
		b.Add(j.Key, authz.PrivDescribe, authz.Candidate{Kind: authz.KindJob, Key: j.Key, Namespace: j.Namespace, Name: j.Name})
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return graph.JobRow{}, err
	}
	var seen []graph.JobRow
	var ids []string
	for _, j := range amb.Jobs {
		if b.OK(j.Key) {
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
	return graph.JobRow{}, api.BadRequest("name: job %s %s was reported for several dbt nodes (%s); ask for it with "+
		"dbtJob(namespace, uniqueId, role)", amb.Namespace, amb.Name, strings.Join(ids, ", "))
}

// visibleJob answers a job found by a lookup, or missing when it was not found or the caller may not describe it
// (the same answer).
func (s *Catalog) visibleJob(ctx context.Context, j graph.JobRow, found bool, missing error) (graph.JobRow, error) {
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
func (s *Catalog) findDbtJob(ctx context.Context, ns, uniqueID string, role api.DbtRole) (graph.JobRow, error) {
	missing := api.NotFound("dbt job %s %s (%s) not found", ns, uniqueID, role)
	cns, _, err := s.canon.Job(ns, uniqueID)
	if err != nil {
		return graph.JobRow{}, api.BadRequest("dbt job %s %s: %v", ns, uniqueID, err)
	}
	j, found, err := s.store.JobByDbtUniqueID(ctx, normalize.KeyNamespace(cns), uniqueID, string(role))
	if err != nil {
		return j, api.StoreErr(err)
	}
	return s.visibleJob(ctx, j, found, missing)
}

// FindField resolves a field of a dataset named at t, and the dataset.
func (s *Catalog) FindField(ctx context.Context, ref api.FieldRef, t int64) (graph.FieldRow, graph.DatasetRow, error) {
	d, _, err := s.findDataset(ctx, ref.Namespace, ref.Name, t)
	if err != nil {
		return graph.FieldRow{}, d, err
	}
	f, found, err := s.store.FieldAt(ctx, d.Key, ref.Field, t)
	if err != nil {
		return f, d, api.StoreErr(err)
	}
	if !found {
		return f, d, api.NotFound("field %s of dataset %s %s not found at that time", ref.Field, ref.Namespace, ref.Name)
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
func resolvedFrom(b graph.NameBinding, t int64) *api.Alias {
	if b.Kind == graph.NamePrimary && b.ValidFrom <= t && t < b.ValidTo {
		return nil
	}
	return aliasOf(b)
}
