package catalog

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// Dataset finds a dataset by name at asOf (default now). An old name after a rename answers the renamed
// dataset with ResolvedFrom set to the name that matched.
func (s *Catalog) Dataset(ctx context.Context, ns, name string, asOf *time.Time) (*api.Dataset, error) {
	t := s.asOf(asOf)
	row, binding, err := s.findDataset(ctx, ns, name, t)
	if err != nil {
		return nil, err
	}
	d := datasetOf(row, graph.FromMillis(t))
	d.ResolvedFrom = resolvedFrom(binding, t)
	return d, s.present(ctx, []*api.Dataset{d})
}

// Job finds a job by name; asOf selects the version.
func (s *Catalog) Job(ctx context.Context, ns, name string, asOf *time.Time) (*api.Job, error) {
	t := s.asOf(asOf)
	j, err := s.FindJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return jobOf(j, graph.FromMillis(t)), nil
}

// DbtJob finds the job of a dbt node by the unique_id its dbt_node facet carried, in a role (default NODE; TESTS is
// dbt-ol's per-node test job); asOf selects the version (docs/adr/0027-dbt-job-identity.md).
func (s *Catalog) DbtJob(ctx context.Context, ns, uniqueID string, role *api.DbtRole, asOf *time.Time) (*api.Job, error) {
	r := api.DbtRoleNode
	if role != nil {
		r = *role
	}
	if r != api.DbtRoleNode && r != api.DbtRoleTests {
		return nil, api.BadRequest("role: must be %s or %s, got %q", api.DbtRoleNode, api.DbtRoleTests, r)
	}
	t := s.asOf(asOf)
	j, err := s.findDbtJob(ctx, ns, uniqueID, r)
	if err != nil {
		return nil, err
	}
	return jobOf(j, graph.FromMillis(t)), nil
}

// Run finds a run by node id, or by runId: the one run with that runId the caller may describe, or with job set
// the run of that job. A runId that names visible runs of several jobs is ambiguous (BAD_REQUEST: ask with the
// run's id or its job). Ids issued before projection version 2 (a bare runId inside) are runId lookups.
func (s *Catalog) Run(ctx context.Context, id string, job *api.JobRef) (*api.Run, error) {
	keys, runID, jobKey, err := s.runCandidates(ctx, id, job)
	if err != nil {
		return nil, err
	}
	runs, err := s.RunsByKeys(ctx, keys)
	if err != nil {
		return nil, err
	}
	for k, r := range runs {
		if jobKey != "" && r.JobKey != jobKey { // keyed by one of the job's names, but another job's run
			delete(runs, k)
		}
	}
	if len(runs) > 1 {
		return nil, api.BadRequest("id: runId %s names runs of %d jobs; ask with the run's id or its job", runID, len(runs))
	}
	for _, r := range runs {
		return r, nil
	}
	// missing, or of a job the caller may not describe: the same answer
	if a := authz.RequestAuditFrom(ctx); a != nil && s.runExists(ctx, keys) {
		a.Denied(authz.Candidate{Kind: authz.KindJob, Key: runID}, "run of a job not visible to the caller")
	}
	return nil, api.NotFound("run %s not found", id)
}

// runCandidates returns the keys id may name: the exact key of a node id of projection version 2 or of a job's
// run, else every run with that runId; with job, also the key of that job (the runs must be its own).
func (s *Catalog) runCandidates(ctx context.Context, id string, job *api.JobRef) ([]string, string, string, error) {
	key := api.RunKeyOf(id)
	runID, jobKey := graph.SplitRunKey(key)
	if job != nil {
		j, err := s.FindJob(ctx, job.Namespace, job.Name)
		if err != nil {
			return nil, runID, "", err
		}
		if len(j.Names) == 0 {
			return []string{graph.RunKey(runID, j.Key)}, runID, j.Key, nil
		}
		// a dbt node job's runs are keyed by the names they were reported under (ADR 0027)
		keys := make([]string, 0, len(j.Names))
		for _, n := range j.Names {
			keys = append(keys, graph.RunKey(runID, graph.JobKey(normalize.KeyNamespace(j.Namespace), n)))
		}
		return keys, runID, j.Key, nil
	}
	if jobKey != "" {
		return []string{key}, runID, "", nil
	}
	keys, err := s.store.RunsByRunID(ctx, runID)
	if err != nil {
		return nil, runID, "", api.StoreErr(err)
	}
	return keys, runID, "", nil
}

func (s *Catalog) runExists(ctx context.Context, keys []string) bool {
	rows, err := s.store.RunsByKeys(ctx, keys)
	return err == nil && len(rows) > 0
}

// RunsByKeys batch-loads the runs of jobs the caller may describe (dataloader); the error message, free text
// that may name anything, is shown only with VIEW_SQL on the job (like the code that failed).
func (s *Catalog) RunsByKeys(ctx context.Context, keys []string) (map[string]*api.Run, error) {
	rows, err := s.store.RunsByKeys(ctx, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	jobs, err := s.store.JobsByKeys(ctx, runJobs(rows))
	if err != nil {
		return nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for k, j := range jobs {
		c := authz.Candidate{Kind: authz.KindJob, Key: k, Namespace: j.Namespace, Name: j.Name}
		b.Add("d|"+k, authz.PrivDescribe, c)
		b.Add("s|"+k, authz.PrivViewSQL, c)
		b.Add("p|"+k, authz.PrivProduce, c)
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	out := make(map[string]*api.Run, len(rows))
	for k, r := range rows {
		if !b.OK("d|" + r.JobKey) {
			continue
		}
		out[k] = runOf(r)
		if out[k].ErrorMessage != nil && !b.OK("s|"+r.JobKey) {
			out[k].ErrorMessage, out[k].ErrorMessageWithheld = nil, true
		}
		// The conflict tells that some other job used the runId: its producers need it, other readers would
		// learn of a job they may not see (OMIT), so only the job's producers see it.
		out[k].RunIDConflict = r.RunIDConflict && b.OK("p|"+r.JobKey)
	}
	return out, s.guardErrorMessages(ctx, out)
}

// guardErrorMessages keeps a run's error message (free text, which names what the run touched) only when the
// caller may describe every dataset the run read or wrote and every dataset its job ever read or wrote (a run
// that failed early may name tables it never reported).
func (s *Catalog) guardErrorMessages(ctx context.Context, runs map[string]*api.Run) error {
	var jobs []string
	for _, r := range runs {
		if r.ErrorMessage != nil && !slices.Contains(jobs, r.JobKey) {
			jobs = append(jobs, r.JobKey)
		}
	}
	clean, err := s.jobsWithVisibleIO(ctx, jobs)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.ErrorMessage != nil && !clean[r.JobKey] {
			r.ErrorMessage, r.ErrorMessageWithheld = nil, true
		}
	}
	for _, r := range runs {
		if r.ErrorMessage == nil {
			continue
		}
		rows, err := s.store.RunIO(ctx, r.Key)
		if err != nil {
			return api.StoreErr(err)
		}
		visible, err := s.visibleRunIO(ctx, rows)
		if err != nil {
			return err
		}
		if slices.Contains(visible, false) {
			r.ErrorMessage, r.ErrorMessageWithheld = nil, true
		}
	}
	return nil
}

func runJobs(rows map[string]graph.RunRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.JobKey)
	}
	return out
}

// DatasetsByKeys batch-loads datasets named as at asOf (dataloader).
func (s *Catalog) DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*api.Dataset, error) {
	rows, err := s.store.DatasetsByKeys(ctx, keys, graph.Millis(asOf))
	if err != nil {
		return nil, api.StoreErr(err)
	}
	if err := s.visibleDatasetRows(ctx, rows); err != nil {
		return nil, err
	}
	out := make(map[string]*api.Dataset, len(rows))
	list := make([]*api.Dataset, 0, len(rows))
	for k, r := range rows {
		out[k] = datasetOf(r, asOf)
		list = append(list, out[k])
	}
	return out, s.present(ctx, list)
}

// JobsByKeys batch-loads the jobs the caller may describe (dataloader).
func (s *Catalog) JobsByKeys(ctx context.Context, keys []string) (map[string]*api.Job, error) {
	rows, err := s.visibleJobs(ctx, keys, authz.PrivDescribe)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	out := make(map[string]*api.Job, len(rows))
	for k, r := range rows {
		out[k] = jobOf(r, now)
	}
	return out, nil
}

// JobVersionsByKeys batch-loads job versions (dataloader).
func (s *Catalog) JobVersionsByKeys(ctx context.Context, keys []string) (map[string]*api.JobVersion, error) {
	rows, err := s.store.JobVersionsByKeys(ctx, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := make(map[string]*api.JobVersion, len(rows))
	for k, r := range rows {
		out[k] = jobVersionOf(r)
	}
	return out, s.guardSQL(ctx, out)
}

// JobVersionAt is the job's definition valid at asOf.
func (s *Catalog) JobVersionAt(ctx context.Context, jobKey string, asOf time.Time) (*api.JobVersion, error) {
	key, err := s.store.JobVersionAt(ctx, jobKey, graph.Millis(asOf))
	if err != nil || key == "" {
		return nil, api.StoreErr(err)
	}
	v, err := s.JobVersionsByKeys(ctx, []string{key})
	return v[key], err
}

// DatasetFields lists the fields valid at asOf; with observedOnRead set, only the fields whose ObservedOnRead is
// that value (false: the schema as the dataset's owners reported it).
func (s *Catalog) DatasetFields(ctx context.Context, datasetKey string, asOf time.Time, observedOnRead *bool) ([]*api.Field, error) {
	rows, err := s.store.FieldsOf(ctx, datasetKey, graph.Millis(asOf))
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := make([]*api.Field, 0, len(rows))
	for _, r := range rows {
		if observedOnRead == nil || *observedOnRead == r.ObservedOnRead {
			out = append(out, fieldOf(r, asOf))
		}
	}
	return out, nil
}

// DatasetAliases lists every name bound to the dataset.
func (s *Catalog) DatasetAliases(ctx context.Context, datasetKey string) ([]*api.Alias, error) {
	rows, err := s.store.DatasetNames(ctx, datasetKey)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	b := permcheck.NewBatch()
	for _, r := range rows {
		b.Add(r.Namespace+"\x00"+r.Name, authz.PrivDescribe,
			authz.Candidate{Kind: authz.KindDataset, Key: datasetKey, Namespace: r.Namespace, Name: r.Name})
	}
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	out := []*api.Alias{}
	for _, r := range rows {
		if b.OK(r.Namespace + "\x00" + r.Name) { // a name the caller may not see is not shown
			out = append(out, aliasOf(r))
		}
	}
	return out, nil
}

// maxPageOffset is the largest offset an offset cursor ("o:<n>") may carry; a larger one is no cursor this
// service made (the store fails on offsets near the 64-bit limit instead of answering an empty page).
const maxPageOffset = math.MaxInt32

// page decodes an offset cursor ("o:<n>") and clamps first.
func page(first *int, after *string) (offset, limit int, err error) {
	limit = 20
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > api.MaxPage {
		return 0, 0, api.BadRequest("first: must be 1..%d", api.MaxPage)
	}
	if after != nil && *after != "" {
		n, convErr := strconv.Atoi(strings.TrimPrefix(*after, "o:"))
		if convErr != nil || n < 0 || n > maxPageOffset || !strings.HasPrefix(*after, "o:") {
			return 0, 0, api.BadRequest("after: not a cursor of this list")
		}
		offset = n
	}
	return offset, limit, nil
}

// endCursor returns the cursor after a page and whether more follow (limit+1 rows were read).
func endCursor(offset, limit, got int) (*string, bool) {
	n := min(got, limit)
	c := "o:" + strconv.Itoa(offset+n)
	return &c, got > limit
}

// DatasetVersions pages through a dataset's versions, newest first.
func (s *Catalog) DatasetVersions(ctx context.Context, datasetKey string, first *int, after *string) (*api.DatasetVersionConnection, error) {
	off, lim, err := page(first, after)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.DatasetVersions(ctx, datasetKey, off, lim+1)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	c := &api.DatasetVersionConnection{Nodes: []*api.DatasetVersion{}}
	for _, r := range rows[:min(len(rows), lim)] {
		c.Nodes = append(c.Nodes, &api.DatasetVersion{DatasetKey: datasetKey, Version: r.Version, Lifecycle: strOrNil(r.Lifecycle), FirstSeenAt: timeOrNil(r.FirstSeenAt),
			ParentVersion: strOrNil(r.ParentVersion), CommittedAt: timeOrNil(r.CommittedAt), Operation: strOrNil(r.Operation),
			Summary: summaryEntries(r.Summary)})
	}
	c.EndCursor, c.HasNextPage = endCursor(off, lim, len(rows))
	return c, nil
}

// MaxVersionWriters bounds the runs one version lists as its writers (a snapshot has one writer; a version an
// engine names on every run, such as a constant, could have thousands).
const MaxVersionWriters = 20

// VersionWriters are the keys of the runs that reported writing the version, newest first (at most
// MaxVersionWriters); the caller's loader drops the runs of jobs it may not describe.
func (s *Catalog) VersionWriters(ctx context.Context, datasetKey, version string) ([]string, error) {
	k, err := s.store.VersionWriters(ctx, datasetKey, version, MaxVersionWriters)
	return k, api.StoreErr(err)
}

// LastWriter is the key of the run that last wrote the dataset ("" when none).
func (s *Catalog) LastWriter(ctx context.Context, datasetKey string) (string, error) {
	k, err := s.store.LastWriter(ctx, datasetKey)
	return k, api.StoreErr(err)
}

// JobRuns pages through a job's runs, newest first.
func (s *Catalog) JobRuns(ctx context.Context, jobKey string, first *int, after *string, state *api.RunState) (*api.RunConnection, error) {
	off, lim, err := page(first, after)
	if err != nil {
		return nil, err
	}
	st := ""
	if state != nil {
		st = string(*state)
	}
	rows, err := s.store.RunsOfJob(ctx, jobKey, st, off, lim+1)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	c := &api.RunConnection{Nodes: []*api.Run{}}
	keys := make([]string, 0, len(rows))
	for _, r := range rows[:min(len(rows), lim)] {
		keys = append(keys, r.Key)
	}
	runs, err := s.RunsByKeys(ctx, keys) // the same guards as every run lookup
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if r, ok := runs[k]; ok {
			c.Nodes = append(c.Nodes, r)
		}
	}
	c.EndCursor, c.HasNextPage = endCursor(off, lim, len(rows))
	return c, nil
}

// RunIO lists what a run read (role READ) or wrote (role WROTE).
func (s *Catalog) RunIO(ctx context.Context, runKey string, role api.IORole) ([]*api.RunIO, error) {
	rows, err := s.store.RunIO(ctx, runKey)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	visible, err := s.visibleRunIO(ctx, rows)
	if err != nil {
		return nil, err
	}
	out := []*api.RunIO{}
	for i, r := range rows {
		if visible[i] && api.IORole(r.Rel) == role {
			out = append(out, runIOOf(r))
		}
	}
	return out, nil
}

// RunEvents lists a run's projected events.
func (s *Catalog) RunEvents(ctx context.Context, runKey string) ([]*api.RunEventSummary, error) {
	rows, err := s.store.RunEvents(ctx, runKey)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	out := make([]*api.RunEventSummary, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// FieldsByKeys batch-loads fields (dataloader).
func (s *Catalog) FieldsByKeys(ctx context.Context, keys []string) (map[string]*api.Field, error) {
	rows, err := s.store.FieldsByKeys(ctx, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	now := s.clock()
	out := make(map[string]*api.Field, len(rows))
	for k, r := range rows {
		out[k] = fieldOf(r, now)
	}
	return out, nil
}

// visibleRunIO checks each dataset a run read or wrote under its current identity and its identity when the
// run observed it (the instant RunIO.dataset names it at): one read and one policy call per distinct instant.
func (s *Catalog) visibleRunIO(ctx context.Context, rows []graph.RunIORow) ([]bool, error) {
	byT := map[int64][]string{}
	for _, r := range rows {
		t := graph.Millis(runIOOf(r).ObservedAt)
		byT[t] = append(byT[t], r.DatasetKey)
	}
	seen := map[int64]map[string]graph.DatasetRow{}
	for t, keys := range byT {
		ds, err := s.store.DatasetsByKeys(ctx, keys, t)
		if err != nil {
			return nil, api.StoreErr(err)
		}
		if err := s.visibleDatasetRows(ctx, ds); err != nil {
			return nil, err
		}
		seen[t] = ds
	}
	out := make([]bool, len(rows))
	for i, r := range rows {
		_, out[i] = seen[graph.Millis(runIOOf(r).ObservedAt)][r.DatasetKey]
	}
	return out, nil
}
