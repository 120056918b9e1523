package lineage

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// Dataset finds a dataset by name at asOf (default now). An old name after a rename answers the renamed
// dataset with ResolvedFrom set to the name that matched.
func (s *Service) Dataset(ctx context.Context, ns, name string, asOf *time.Time) (*Dataset, error) {
	t, _ := s.asOf(asOf)
	row, binding, err := s.findDataset(ctx, ns, name, t)
	if err != nil {
		return nil, err
	}
	d := datasetOf(row, graph.FromMillis(t))
	d.ResolvedFrom = resolvedFrom(binding, t)
	return d, nil
}

// Job finds a job by name; asOf selects the version.
func (s *Service) Job(ctx context.Context, ns, name string, asOf *time.Time) (*Job, error) {
	t, _ := s.asOf(asOf)
	j, err := s.findJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return jobOf(j, graph.FromMillis(t)), nil
}

// Run finds a run by runId or node id.
func (s *Service) Run(ctx context.Context, id string) (*Run, error) {
	key := RunKeyOf(id)
	runs, err := s.RunsByKeys(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	r, ok := runs[key]
	if !ok {
		return nil, notFound("run %s not found", id)
	}
	if vis, err := s.visible(ctx, authz.Candidate{Kind: authz.KindJob, Key: r.JobKey}); err != nil || !vis {
		return nil, firstErr(err, notFound("run %s not found", id))
	}
	return r, nil
}

// RunsByKeys batch-loads runs (dataloader).
func (s *Service) RunsByKeys(ctx context.Context, keys []string) (map[string]*Run, error) {
	rows, err := s.store.RunsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make(map[string]*Run, len(rows))
	for k, r := range rows {
		out[k] = runOf(r)
	}
	return out, nil
}

// DatasetsByKeys batch-loads datasets named as at asOf (dataloader).
func (s *Service) DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*Dataset, error) {
	rows, err := s.store.DatasetsByKeys(ctx, keys, graph.Millis(asOf))
	if err != nil {
		return nil, storeErr(err)
	}
	out := make(map[string]*Dataset, len(rows))
	for k, r := range rows {
		out[k] = datasetOf(r, asOf)
	}
	return out, nil
}

// JobsByKeys batch-loads jobs (dataloader).
func (s *Service) JobsByKeys(ctx context.Context, keys []string) (map[string]*Job, error) {
	rows, err := s.store.JobsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	now := s.clock()
	out := make(map[string]*Job, len(rows))
	for k, r := range rows {
		out[k] = jobOf(r, now)
	}
	return out, nil
}

// JobVersionsByKeys batch-loads job versions (dataloader).
func (s *Service) JobVersionsByKeys(ctx context.Context, keys []string) (map[string]*JobVersion, error) {
	rows, err := s.store.JobVersionsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make(map[string]*JobVersion, len(rows))
	for k, r := range rows {
		out[k] = jobVersionOf(r)
	}
	return out, nil
}

// JobVersionAt is the job's definition valid at asOf.
func (s *Service) JobVersionAt(ctx context.Context, jobKey string, asOf time.Time) (*JobVersion, error) {
	key, err := s.store.JobVersionAt(ctx, jobKey, graph.Millis(asOf))
	if err != nil || key == "" {
		return nil, storeErr(err)
	}
	v, err := s.JobVersionsByKeys(ctx, []string{key})
	return v[key], err
}

// DatasetFields lists the fields valid at asOf.
func (s *Service) DatasetFields(ctx context.Context, datasetKey string, asOf time.Time) ([]*Field, error) {
	rows, err := s.store.FieldsOf(ctx, datasetKey, graph.Millis(asOf))
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]*Field, len(rows))
	for i, r := range rows {
		out[i] = fieldOf(r, asOf)
	}
	return out, nil
}

// DatasetAliases lists every name bound to the dataset.
func (s *Service) DatasetAliases(ctx context.Context, datasetKey string) ([]*Alias, error) {
	rows, err := s.store.DatasetNames(ctx, datasetKey)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]*Alias, len(rows))
	for i, r := range rows {
		out[i] = aliasOf(r)
	}
	return out, nil
}

// page decodes an offset cursor ("o:<n>") and clamps first.
func page(first *int, after *string) (offset, limit int, err error) {
	limit = 20
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > MaxSearchPage {
		return 0, 0, badRequest("first: must be 1..%d", MaxSearchPage)
	}
	if after != nil && *after != "" {
		n, convErr := strconv.Atoi(strings.TrimPrefix(*after, "o:"))
		if convErr != nil || n < 0 || !strings.HasPrefix(*after, "o:") {
			return 0, 0, badRequest("after: not a cursor of this list")
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
func (s *Service) DatasetVersions(ctx context.Context, datasetKey string, first *int, after *string) (*DatasetVersionConnection, error) {
	off, lim, err := page(first, after)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.DatasetVersions(ctx, datasetKey, off, lim+1)
	if err != nil {
		return nil, storeErr(err)
	}
	c := &DatasetVersionConnection{Nodes: []*DatasetVersion{}}
	for _, r := range rows[:min(len(rows), lim)] {
		c.Nodes = append(c.Nodes, &DatasetVersion{Version: r.Version, Lifecycle: strOrNil(r.Lifecycle), FirstSeenAt: timeOrNil(r.FirstSeenAt)})
	}
	c.EndCursor, c.HasNextPage = endCursor(off, lim, len(rows))
	return c, nil
}

// LastWriter is the key of the run that last wrote the dataset ("" when none).
func (s *Service) LastWriter(ctx context.Context, datasetKey string) (string, error) {
	k, err := s.store.LastWriter(ctx, datasetKey)
	return k, storeErr(err)
}

// JobRuns pages through a job's runs, newest first.
func (s *Service) JobRuns(ctx context.Context, jobKey string, first *int, after *string, state *RunState) (*RunConnection, error) {
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
		return nil, storeErr(err)
	}
	c := &RunConnection{Nodes: []*Run{}}
	for _, r := range rows[:min(len(rows), lim)] {
		c.Nodes = append(c.Nodes, runOf(r))
	}
	c.EndCursor, c.HasNextPage = endCursor(off, lim, len(rows))
	return c, nil
}

// RunIO lists what a run read (role READ) or wrote (role WROTE).
func (s *Service) RunIO(ctx context.Context, runKey string, role IORole) ([]*RunIO, error) {
	rows, err := s.store.RunIO(ctx, runKey)
	if err != nil {
		return nil, storeErr(err)
	}
	out := []*RunIO{}
	for _, r := range rows {
		if IORole(r.Rel) == role {
			out = append(out, runIOOf(r))
		}
	}
	return out, nil
}

// RunEvents lists a run's projected events.
func (s *Service) RunEvents(ctx context.Context, runKey string) ([]*RunEventSummary, error) {
	rows, err := s.store.RunEvents(ctx, runKey)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]*RunEventSummary, len(rows))
	for i, r := range rows {
		out[i] = eventOf(r)
	}
	return out, nil
}

// Search finds datasets and jobs by name.
func (s *Service) Search(ctx context.Context, q string, first *int, after *string) (*SearchConnection, error) {
	if strings.TrimSpace(q) == "" {
		return nil, badRequest("query: must not be empty")
	}
	off, lim, err := page(first, after)
	if err != nil {
		return nil, err
	}
	hits, err := s.store.Search(ctx, q, off, lim+1)
	if err != nil {
		return nil, storeErr(err)
	}
	c := &SearchConnection{Nodes: []SearchResult{}}
	if err := s.searchNodes(ctx, c, hits[:min(len(hits), lim)]); err != nil {
		return nil, err
	}
	c.EndCursor, c.HasNextPage = endCursor(off, lim, len(hits))
	return c, nil
}

func (s *Service) searchNodes(ctx context.Context, c *SearchConnection, hits []graph.SearchHit) error {
	var dk, jk []string
	for _, h := range hits {
		if h.Label == graph.LabelDataset {
			dk = append(dk, h.Key)
		} else {
			jk = append(jk, h.Key)
		}
	}
	ds, err := s.DatasetsByKeys(ctx, dk, s.clock())
	if err != nil {
		return err
	}
	js, err := s.JobsByKeys(ctx, jk)
	if err != nil {
		return err
	}
	for _, h := range hits {
		if d, ok := ds[h.Key]; ok {
			c.Nodes = append(c.Nodes, d)
		} else if j, ok := js[h.Key]; ok {
			c.Nodes = append(c.Nodes, j)
		}
	}
	return nil
}

// Event says what became of an event id: PROJECTED, QUARANTINED, or PENDING (also for unknown ids).
func (s *Service) Event(ctx context.Context, id string) (*EventStatus, error) {
	row, err := s.store.EventStatus(ctx, id)
	if err != nil {
		return nil, storeErr(err)
	}
	st := &EventStatus{ID: id, State: EventPending}
	switch {
	case row.Projected:
		st.State, st.Producer = EventProjected, strOrNil(row.Event.Producer)
		st.EventType, st.EventTime, st.ReceivedAt = strOrNil(row.Event.EventType), timeOrNil(row.Event.EventTime), timeOrNil(row.Event.ReceivedAt)
	case row.Quarantined:
		st.State, st.Reason, st.Field = EventQuarantined, strOrNil(row.Reason), strOrNil(row.Field)
		st.Producer, st.ReceivedAt = strOrNil(row.Producer), timeOrNil(row.ReceivedAt)
	}
	return st, nil
}

// FieldsByKeys batch-loads fields (dataloader).
func (s *Service) FieldsByKeys(ctx context.Context, keys []string) (map[string]*Field, error) {
	rows, err := s.store.FieldsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	now := s.clock()
	out := make(map[string]*Field, len(rows))
	for k, r := range rows {
		out[k] = fieldOf(r, now)
	}
	return out, nil
}
