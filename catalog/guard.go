package catalog

import (
	"context"
	"slices"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// Lookups obey the rule of the walk: whatever names a node is shown only when the caller may describe that
// node (under its current and its asOf identity); SQL and source code need VIEW_SQL on the job, sensitive tags
// VIEW_SENSITIVE on the dataset. Each guard below is one policy call for the whole list it filters.

// visibleJobs returns the jobs (by key) the caller may describe; unknown keys are not visible.
func (s *Catalog) visibleJobs(ctx context.Context, keys []string, priv authz.Privilege) (map[string]graph.JobRow, error) {
	rows, err := s.store.JobsByKeys(ctx, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for k, j := range rows {
		b.Add(k, priv, authz.Candidate{Kind: authz.KindJob, Key: k, Namespace: j.Namespace, Name: j.Name})
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	for k := range rows {
		if !b.OK(k) {
			delete(rows, k)
		}
	}
	return rows, nil
}

// visibleDatasetRows drops the rows the caller may not describe.
func (s *Catalog) visibleDatasetRows(ctx context.Context, rows map[string]graph.DatasetRow) error {
	b := permcheck.NewBatch()
	for k, r := range rows {
		b.Add(k, authz.PrivDescribe, permcheck.DatasetCandidates(r)...)
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return err
	}
	for k := range rows {
		if !b.OK(k) {
			delete(rows, k)
		}
	}
	return nil
}

// present prepares datasets for the caller: sensitive tags only with VIEW_SENSITIVE, and every sensitive
// dataset returned is recorded in the request's audit.
func (s *Catalog) present(ctx context.Context, ds []*api.Dataset) error {
	set := s.gate.Settings()
	b := permcheck.NewBatch()
	for _, d := range ds {
		if slices.ContainsFunc(d.Tags, func(t api.Tag) bool { return set.Sensitive("", []string{t.Name}) }) {
			b.Add(d.Key, authz.PrivViewSensitive, permcheck.DatasetCandidates(rowNames(d))...)
		}
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return err
	}
	for _, d := range ds {
		s.touch(ctx, set, d)
		if marked := b.Has(d.Key); marked && !b.OK(d.Key) {
			d.Tags = slices.DeleteFunc(slices.Clone(d.Tags), func(t api.Tag) bool { return set.Sensitive("", []string{t.Name}) })
		}
	}
	return nil
}

// touch records a sensitive dataset in the request's audit (nil audit: nothing).
func (s *Catalog) touch(ctx context.Context, set authz.Settings, d *api.Dataset) {
	a := authz.RequestAuditFrom(ctx)
	if a == nil {
		return
	}
	tags := make([]string, len(d.Tags))
	for i, t := range d.Tags {
		tags[i] = t.Name
	}
	if set.Sensitive(d.CurrentNamespace, tags) || set.Sensitive(d.Namespace, tags) {
		a.Touched(authz.Candidate{Kind: authz.KindDataset, Key: d.Key, Namespace: d.CurrentNamespace, Name: d.CurrentName})
	}
}

// TouchNodes audits the sensitive datasets of an answer (also when it came from the result cache).
func (s *Catalog) TouchNodes(ctx context.Context, nodes []api.Node) {
	if authz.RequestAuditFrom(ctx) == nil {
		return
	}
	set := s.gate.Settings()
	for _, n := range nodes {
		if d, ok := n.(*api.Dataset); ok {
			s.touch(ctx, set, d)
		}
	}
}

func rowNames(d *api.Dataset) graph.DatasetRow {
	return graph.DatasetRow{Key: d.Key, Namespace: d.Namespace, Name: d.Name, CurrentNS: d.CurrentNamespace,
		CurrentName: d.CurrentName}
}

// guardSQL removes SQL and source code, and says so (SQLWithheld), from versions of jobs the caller may not
// VIEW_SQL, and from versions of jobs that read or wrote a dataset the caller may not describe: that free text
// names the datasets (issue 13 item 14).
func (s *Catalog) guardSQL(ctx context.Context, vs map[string]*api.JobVersion) error {
	var jobs []string
	for _, v := range vs {
		if (v.SQL != nil || v.SourceCodeLocation != nil) && !slices.Contains(jobs, v.JobKey) {
			jobs = append(jobs, v.JobKey)
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	ok, err := s.visibleJobs(ctx, jobs, authz.PrivViewSQL)
	if err != nil {
		return err
	}
	allowed := make([]string, 0, len(ok))
	for k := range ok {
		allowed = append(allowed, k)
	}
	clean, err := s.jobsWithVisibleIO(ctx, allowed)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if (v.SQL != nil || v.SourceCodeLocation != nil) && !clean[v.JobKey] {
			v.SQL, v.SourceCodeLocation, v.SQLWithheld = nil, nil, true
		}
	}
	return nil
}

// jobsWithVisibleIO returns the jobs every one of whose inputs and outputs the caller may describe (one read and
// one policy call for the list). A job with more datasets than graph.MaxJobDatasetsChecked is not in it, unless
// the caller may describe the whole graph.
func (s *Catalog) jobsWithVisibleIO(ctx context.Context, jobs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(jobs) == 0 {
		return out, nil
	}
	if scope, err := s.scope(ctx); err != nil {
		return nil, err
	} else if scope.Global { // may describe everything: nothing to withhold
		for _, j := range jobs {
			out[j] = true
		}
		return out, nil
	}
	ds, truncated, err := s.store.JobDatasets(ctx, jobs)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for _, j := range jobs {
		if truncated[j] {
			continue
		}
		var cands []authz.Candidate
		for _, d := range ds[j] {
			cands = append(cands, authz.Candidate{Kind: authz.KindDataset, Namespace: d.Namespace, Name: d.Name})
		}
		if len(cands) == 0 {
			out[j] = true // no dataset to name
			continue
		}
		b.Add(j, authz.PrivDescribe, cands...)
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if checked := b.Has(j); checked && b.OK(j) {
			out[j] = true
		}
	}
	return out, nil
}
