package lineage

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
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
	return d, s.present(ctx, []*Dataset{d})
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
	if !ok { // missing, or of a job the caller may not describe: the same answer
		if a := authz.RequestAuditFrom(ctx); a != nil && s.runExists(ctx, key) {
			a.Denied(authz.Candidate{Kind: authz.KindJob, Key: key}, "run of a job not visible to the caller")
		}
		return nil, notFound("run %s not found", id)
	}
	return r, nil
}

func (s *Service) runExists(ctx context.Context, key string) bool {
	rows, err := s.store.RunsByKeys(ctx, []string{key})
	return err == nil && len(rows) > 0
}

// RunsByKeys batch-loads the runs of jobs the caller may describe (dataloader); the error message, free text
// that may name anything, is shown only with VIEW_SQL on the job (like the code that failed).
func (s *Service) RunsByKeys(ctx context.Context, keys []string) (map[string]*Run, error) {
	rows, err := s.store.RunsByKeys(ctx, keys)
	if err != nil {
		return nil, storeErr(err)
	}
	jobs, err := s.store.JobsByKeys(ctx, runJobs(rows))
	if err != nil {
		return nil, storeErr(err)
	}
	b := newBatch()
	for k, j := range jobs {
		c := authz.Candidate{Kind: authz.KindJob, Key: k, Namespace: j.Namespace, Name: j.Name}
		b.add("d|"+k, authz.PrivDescribe, c)
		b.add("s|"+k, authz.PrivViewSQL, c)
	}
	if err := b.run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	out := make(map[string]*Run, len(rows))
	for k, r := range rows {
		if !b.ok("d|" + r.JobKey) {
			continue
		}
		out[k] = runOf(r)
		if out[k].ErrorMessage != nil && !b.ok("s|"+r.JobKey) {
			out[k].ErrorMessage = nil
		}
	}
	return out, s.guardErrorMessages(ctx, out)
}

// guardErrorMessages keeps a run's error message (free text, which names what the run touched) only when the
// caller may describe every dataset the run read or wrote.
func (s *Service) guardErrorMessages(ctx context.Context, runs map[string]*Run) error {
	for _, r := range runs {
		if r.ErrorMessage == nil {
			continue
		}
		rows, err := s.store.RunIO(ctx, r.Key)
		if err != nil {
			return storeErr(err)
		}
		visible, err := s.visibleRunIO(ctx, rows)
		if err != nil {
			return err
		}
		if slices.Contains(visible, false) {
			r.ErrorMessage = nil
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
func (s *Service) DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*Dataset, error) {
	rows, err := s.store.DatasetsByKeys(ctx, keys, graph.Millis(asOf))
	if err != nil {
		return nil, storeErr(err)
	}
	if err := s.visibleDatasetRows(ctx, rows); err != nil {
		return nil, err
	}
	out := make(map[string]*Dataset, len(rows))
	list := make([]*Dataset, 0, len(rows))
	for k, r := range rows {
		out[k] = datasetOf(r, asOf)
		list = append(list, out[k])
	}
	return out, s.present(ctx, list)
}

// JobsByKeys batch-loads the jobs the caller may describe (dataloader).
func (s *Service) JobsByKeys(ctx context.Context, keys []string) (map[string]*Job, error) {
	rows, err := s.visibleJobs(ctx, keys, authz.PrivDescribe)
	if err != nil {
		return nil, err
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
	return out, s.guardSQL(ctx, out)
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

// DatasetFields lists the fields valid at asOf; with observedOnRead set, only the fields whose ObservedOnRead is
// that value (false: the schema as the dataset's owners reported it).
func (s *Service) DatasetFields(ctx context.Context, datasetKey string, asOf time.Time, observedOnRead *bool) ([]*Field, error) {
	rows, err := s.store.FieldsOf(ctx, datasetKey, graph.Millis(asOf))
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]*Field, 0, len(rows))
	for _, r := range rows {
		if observedOnRead == nil || *observedOnRead == r.ObservedOnRead {
			out = append(out, fieldOf(r, asOf))
		}
	}
	return out, nil
}

// DatasetAliases lists every name bound to the dataset.
func (s *Service) DatasetAliases(ctx context.Context, datasetKey string) ([]*Alias, error) {
	rows, err := s.store.DatasetNames(ctx, datasetKey)
	if err != nil {
		return nil, storeErr(err)
	}
	b := newBatch()
	for _, r := range rows {
		b.add(r.Namespace+"\x00"+r.Name, authz.PrivDescribe,
			authz.Candidate{Kind: authz.KindDataset, Key: datasetKey, Namespace: r.Namespace, Name: r.Name})
	}
	if err := b.run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return nil, err
	}
	out := []*Alias{}
	for _, r := range rows {
		if b.ok(r.Namespace + "\x00" + r.Name) { // a name the caller may not see is not shown
			out = append(out, aliasOf(r))
		}
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
func (s *Service) RunIO(ctx context.Context, runKey string, role IORole) ([]*RunIO, error) {
	rows, err := s.store.RunIO(ctx, runKey)
	if err != nil {
		return nil, storeErr(err)
	}
	visible, err := s.visibleRunIO(ctx, rows)
	if err != nil {
		return nil, err
	}
	out := []*RunIO{}
	for i, r := range rows {
		if visible[i] && IORole(r.Rel) == role {
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

// Search finds datasets and jobs by name, keeping only those the caller may describe. Pages are positioned
// after the last hit returned (never by an offset, which would count hidden hits), and a page scans on until it
// has a visible hit more than it returns or the matches run out, so whether a page is empty, and hasNextPage, depend
// only on what the caller may see. The one exception is a page that scans searchScanMax hits (far beyond the
// design's graph): it ends there with hasNextPage. Cursors are sealed and bound to the caller and the query, so
// a position never shows which hit it names.
func (s *Service) Search(ctx context.Context, q string, first *int, after *string) (*SearchConnection, error) {
	if strings.TrimSpace(q) == "" {
		return nil, badRequest("query: must not be empty")
	}
	cursorContext := "search\x00" + digest(authz.FromContext(ctx).Subject) + "\x00" + q
	lim, pos, err := s.searchPage(first, after, cursorContext)
	if err != nil {
		return nil, err
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	var found []searchFound
	exhausted := false
	for scanned := 0; scanned < searchScanMax && len(found) <= lim; {
		hits, err := s.store.SearchAfter(ctx, q, pos, searchBatch)
		if err != nil {
			return nil, storeErr(err)
		}
		got, err := s.searchNodes(ctx, hits)
		if err != nil {
			return nil, err
		}
		found = append(found, got...)
		scanned += len(hits)
		if len(hits) < searchBatch {
			exhausted = true
			break
		}
		pos = hits[len(hits)-1]
	}
	c := &SearchConnection{Nodes: []SearchResult{}, PermissionsFiltered: !scope.Global,
		HasNextPage: len(found) > lim || !exhausted}
	for _, f := range found[:min(lim, len(found))] {
		c.Nodes = append(c.Nodes, f.node)
	}
	end := pos // the scan cap: continue after the last hit scanned
	if len(found) > 0 && (len(found) > lim || exhausted) {
		end = found[min(lim, len(found))-1].hit
	}
	if c.HasNextPage || len(found) > 0 {
		cur, err := s.searchCursor(end, cursorContext)
		if err != nil {
			return nil, err
		}
		c.EndCursor = &cur
	} else if after != nil && *after != "" {
		c.EndCursor = after
	}
	return c, nil
}

type searchFound struct {
	node SearchResult
	hit  graph.SearchHit
}

// searchNodes loads the hits the caller may describe, in hit order.
func (s *Service) searchNodes(ctx context.Context, hits []graph.SearchHit) ([]searchFound, error) {
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
		return nil, err
	}
	js, err := s.JobsByKeys(ctx, jk)
	if err != nil {
		return nil, err
	}
	var out []searchFound
	for _, h := range hits {
		if d, ok := ds[h.Key]; ok && h.Label == graph.LabelDataset {
			out = append(out, searchFound{d, h})
		} else if j, ok := js[h.Key]; ok && h.Label != graph.LabelDataset {
			out = append(out, searchFound{j, h})
		}
	}
	return out, nil
}

// Search paging.
const (
	searchBatch   = 500     // hits read per round
	searchScanMax = 200_000 // hits one page may scan before it ends with hasNextPage (design: 30,000 datasets)
)

// searchCursor is the sealed position after a hit, for one caller and query.
func (s *Service) searchCursor(h graph.SearchHit, context string) (string, error) {
	b, _ := json.Marshal([]string{h.Label, h.Key, h.Name})
	return s.cursor.seal(b, context)
}

func (s *Service) searchPage(first *int, after *string, context string) (int, graph.SearchHit, error) {
	limit := 20
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > MaxSearchPage {
		return 0, graph.SearchHit{}, badRequest("first: must be 1..%d", MaxSearchPage)
	}
	if after == nil || *after == "" {
		return limit, graph.SearchHit{}, nil
	}
	bad := badRequest("after: not a cursor of this search for this caller")
	raw, ok := s.cursor.open(*after, context)
	var parts []string
	if !ok || json.Unmarshal(raw, &parts) != nil || len(parts) != 3 || parts[2] == "" {
		return 0, graph.SearchHit{}, bad
	}
	return limit, graph.SearchHit{Label: parts[0], Key: parts[1], Name: parts[2]}, nil
}

// Event says what became of an event id: PROJECTED, QUARANTINED, or PENDING (also for unknown ids).
func (s *Service) Event(ctx context.Context, id string) (*EventStatus, error) {
	row, err := s.store.EventStatus(ctx, id)
	if err != nil {
		return nil, storeErr(err)
	}
	st := &EventStatus{ID: id, State: EventPending}
	if row, err = s.eventVisible(ctx, row); err != nil {
		return nil, err
	}
	switch {
	case row.Projected:
		st.State, st.Producer = EventProjected, strOrNil(row.Event.Producer)
		st.EventType, st.EventTime, st.ReceivedAt = strOrNil(row.Event.EventType), timeOrNil(row.Event.EventTime), timeOrNil(row.Event.ReceivedAt)
		if st.UnresolvedIdentities, err = s.eventUnresolved(ctx, row); err != nil {
			return nil, err
		}
	case row.Quarantined:
		st.State, st.Reason, st.Field = EventQuarantined, strOrNil(row.Reason), strOrNil(row.Field)
		st.Producer, st.ReceivedAt = strOrNil(row.Producer), timeOrNil(row.ReceivedAt)
	}
	return st, nil
}

// eventUnresolved lists the identifiers a projected event stated that name no single dataset (issue 14 item 1:
// nothing vanishes silently). They may name anything, like quarantine reasons, so only a caller that may describe
// the whole graph sees them; anyone else gets an empty list.
func (s *Service) eventUnresolved(ctx context.Context, row graph.EventStatusRow) ([]*UnresolvedIdentity, error) {
	ids, err := project.UnresolvedInPayload(row.Payload)
	if err != nil || len(ids) == 0 {
		return []*UnresolvedIdentity{}, storeErrOrNil(err)
	}
	scope, err := s.scope(ctx)
	if err != nil {
		return nil, err
	}
	out := []*UnresolvedIdentity{}
	if !scope.Global {
		return out, nil
	}
	for _, u := range ids {
		out = append(out, &UnresolvedIdentity{Namespace: u.Namespace, Name: u.Name, Reason: u.Reason})
	}
	return out, nil
}

func storeErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return storeErr(err)
}

// eventVisible hides what the caller may not see as PENDING, the answer for an unknown id: a projected event of
// a run of a job it may not describe, and quarantine reasons (which may name anything) unless it may describe
// the whole graph.
func (s *Service) eventVisible(ctx context.Context, row graph.EventStatusRow) (graph.EventStatusRow, error) {
	if row.Projected {
		runs, err := s.RunsByKeys(ctx, []string{row.Event.RunKey})
		if err != nil {
			return row, err
		}
		if _, ok := runs[row.Event.RunKey]; !ok || row.Event.RunKey == "" {
			return graph.EventStatusRow{}, nil
		}
	}
	if row.Quarantined && !row.Projected {
		scope, err := s.scope(ctx)
		if err != nil {
			return row, err
		}
		if !scope.Global {
			return graph.EventStatusRow{}, nil
		}
	}
	return row, nil
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

// visibleRunIO checks each dataset a run read or wrote under its current identity and its identity when the
// run observed it (the instant RunIO.dataset names it at): one read and one policy call per distinct instant.
func (s *Service) visibleRunIO(ctx context.Context, rows []graph.RunIORow) ([]bool, error) {
	byT := map[int64][]string{}
	for _, r := range rows {
		t := graph.Millis(runIOOf(r).ObservedAt)
		byT[t] = append(byT[t], r.DatasetKey)
	}
	seen := map[int64]map[string]graph.DatasetRow{}
	for t, keys := range byT {
		ds, err := s.store.DatasetsByKeys(ctx, keys, t)
		if err != nil {
			return nil, storeErr(err)
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
