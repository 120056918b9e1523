package project

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// The jobs' fold state lives in the projector's memory (ingest/foldstate) between transactions, like the
// datasets' (dsfold.go; docs/adr/0045-in-memory-job-fold-state.md). Per job: its head checkpoint, the runs since it
// (the open runs and those after the checkpoint), the projHash of every INPUT_TO / OUTPUT_TO it last wrote, the
// evidence it last wrote on the Job, its declarations and the projHash of every COLUMN_FEEDS it last wrote (with
// the fieldsSig of the datasets they end on, ADR 0077). A batch whose job is held (a hit) neither locks and reads
// the job's checkpoint (lockJobs) nor reads its runs back (loadJobRuns), its edges' digests or its declarations:
// the runs the batch changed come from the run step's fold (runState), the rest from memory.
//
// Fencing: every transaction that folds a job ends with one statement per job guarded by the job's version stamp,
// `WHERE coalesce(j.projSeq, 0) = $seq SET ..., j.projSeq = $seq + 1`, after taking the job's write lock. Every
// transaction that changes a job's runs, cuts or declarations folds the job, so a stamp that moved means another
// writer (a second instance, a former owner of the partition) changed what the cached view was folded from: the
// transaction is aborted, the entry dropped and the batch retried with the job loaded from Neo4j.
//
// Nothing stored changes form. The job's state is recoverable from what is written through every transaction
// (Runs and their READ/WROTE, the datasets' cuts and fields, the Job's evidence, the edges): the head checkpoint
// (Job.edgeCkpt) is only the point a reload folds from. So it is saved write-behind, with no replay point: only
// when the entry is dirty and at most every jobSaveEvery, beyond the cache's bound (JobStateMaxBytes), at a rebalance or
// shutdown, with the stamp it is current at (Job.projSnap; a loader finding projSnap < projSeq counts the state
// behind, folds it from the runs since the stored head and saves it with the change; ADR 0079). It is saved with
// the change whenever the stored one may no longer be a valid starting point: a fold that did not start from the
// head (a late run, a dataset's cuts or fields changed, a job without a usable checkpoint), a projector without a
// cache. A stored checkpoint older than the cached head is still valid: every
// run that changed since starts at or after the cached head, so a reload folds it again from the Runs.

// jobCached is a job's cached fold state. Values are immutable once in the cache.
type jobCached struct {
	ck    *fold.Checkpoint    // the head checkpoint the next batch folds into
	runs  map[string]fold.Run // the job's runs starting at or after ck.At, by run key
	edges map[string]any      // per INPUT_TO / OUTPUT_TO ("DIR|job|ds|kind"), the projHash last written
	ev    map[string]any      // the Job's evidence properties last written
	decls []fold.Decl         // the job's JobEvents
	// cols are the projHash of every COLUMN_FEEDS into colOuts, as writeColumnEdges:read would return them after
	// the last write (nil: not known, read back); colSigs is the fieldsSig, at that write, of every dataset an
	// edge can end on (columnDigests, docs/adr/0077-column-feeds-digests-in-the-job-fold-state-and-the-remaining-fold-moves.md).
	cols    map[string]any
	colOuts []string
	colSigs map[string]string
}

type jobEntry = foldstate.Entry[*jobCached]

// jobWork is one job in one transaction attempt.
type jobWork struct {
	key       string
	base      *jobEntry // the cache entry it started from (nil: loaded from Neo4j in this attempt)
	seq       int64     // the stamp the write is guarded by
	next      *jobCached
	save      bool // the head checkpoint is written with this change
	due       bool // ... because it was written behind for jobSaveEvery (dueWithChange)
	positions []foldstate.Pos
	// datasets are the stamps of the datasets its fold took from the dataset fold state (jobdatasets.go): the
	// fenced write is refused unless each node still has its stamp.
	datasets map[string]int64
}

// jobFoldState is the projector's job fold state.
type jobFoldState struct {
	cache     *foldstate.Cache[*jobCached]
	now       func() time.Time
	requests  prometheus.Counter
	hits      prometheus.Counter
	conflicts prometheus.Counter
	behind    prometheus.Counter
	entries   prometheus.GaugeFunc
	bytes     prometheus.GaugeFunc
	saves     *prometheus.CounterVec
	disabled  bool // tests: no cache (every batch loads every job, as before)
}

// JobStateMaxBytes is the resident bytes of job fold state the projector keeps before evicting the least recently
// used clean entry (jobCached.Size plus foldstate.EntryOverhead per job; --consumer-job-state-mib). It replaces
// the bound of foldstate.DefaultCapacity entries (4,096), which on the design-size world (~20,000 jobs, picked at
// random per run) pushed an entry out about a minute after its last touch, so a dirty job was saved once per touch
// whatever jobSaveEvery said. A job of the load generator's realistic mix keeps ~13 KB
// (TestJobStateSizeEstimatesTheResidentHeap), so 512 MiB holds ~40,000 such jobs: the design world's ~20,000 in
// ~260 MB, with room for jobs twice that size. With the dataset state's 1 GiB and the recent events' 256 MiB the caches stay under half of the
// projector's 4 GiB soft memory limit (docs/adr/0079-job-state-saved-write-behind.md, amendment).
const JobStateMaxBytes int64 = 512 << 20

// newJobFoldState builds the job fold state bounded by the states' resident bytes (jobCached.Size;
// foldstate.NewSized; JobStateMaxBytes when maxBytes <= 0).
func newJobFoldState(maxBytes int64) *jobFoldState {
	if maxBytes <= 0 {
		maxBytes = JobStateMaxBytes
	}
	f := &jobFoldState{now: time.Now,
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_job_state_requests_total",
			Help: "Job fold-state lookups in the projector's memory."}),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_job_state_hits_total",
			Help: "Job fold-state lookups answered from memory (the others lock the job and read its checkpoint and " +
				"runs from Neo4j)."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_job_fence_conflicts_total",
			Help: "Batches retried because a fenced job write found another writer's version stamp (also counted in " +
				"headwater_projector_fence_conflicts_total)."}),
		behind: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_job_state_behind_total",
			Help: "Job states loaded from Neo4j whose stored head checkpoint was saved before the job's last write " +
				"(projSnap < projSeq: after a crash, a rebalance or with a second instance): folded with every run " +
				"since it and saved with the change."}),
		saves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_projector_job_state_saves_total",
			Help: "Job checkpoint (edgeCkpt) writes, by why: with the change (through), due or flushed (behind)."},
			[]string{"kind"}),
	}
	f.cache = foldstate.NewSized[*jobCached](maxBytes, jobStats{f})
	f.entries = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_job_state_entries",
		Help: "Jobs whose fold state the projector holds in memory."}, func() float64 { return float64(f.cache.Len()) })
	f.bytes = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_job_state_bytes",
		Help: "Estimated resident bytes of the job fold state in memory (bounded by --consumer-job-state-mib)."},
		func() float64 { return float64(f.cache.Bytes()) })
	return f
}

func (f *jobFoldState) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.requests, f.hits, f.conflicts, f.behind, f.entries, f.bytes, f.saves}
}

type jobStats struct{ f *jobFoldState }

func (s jobStats) Hit()  { s.f.requests.Inc(); s.f.hits.Inc() }
func (s jobStats) Miss() { s.f.requests.Inc() }

// jobTx is one transaction callback's job work. A nil *jobTx (upgrades) holds nothing and writes everything
// through.
type jobTx struct {
	f     *jobFoldState
	works map[string]*jobWork
	err   error
}

func (f *jobFoldState) begin() *jobTx { return &jobTx{f: f, works: map[string]*jobWork{}} }

// jobFencedError names the jobs whose fenced write was refused, and the datasets served from the dataset fold
// state whose stamp had moved (with the stamp they were served at).
type jobFencedError struct {
	keys     []string
	datasets map[string]int64
}

func (e *jobFencedError) Error() string { return fmt.Sprintf("%v: jobs %v", errFenced, e.keys) }
func (e *jobFencedError) Unwrap() error { return errFenced }

// lookup is the job's usable cache entry (nil when missing, or without a cache).
func (t *jobTx) lookup(k string) *jobEntry {
	if t == nil || t.f.disabled {
		return nil
	}
	return t.f.cache.Get(k)
}

// end installs a committed transaction's job states; after a refused write it drops the refused entries that no
// transaction of ours moved on since (the retry loads them from Neo4j).
func (t *jobTx) end(committed bool) {
	if t == nil || t.f.disabled {
		return
	}
	if !committed {
		if fe, ok := errors.AsType[*jobFencedError](t.err); ok {
			for _, k := range fe.keys {
				if e, w := t.f.cache.Peek(k), t.works[k]; e != nil && w != nil && e.Seq == w.seq {
					t.f.cache.Remove(k)
				}
			}
		}
		return
	}
	now := t.f.now()
	for _, w := range t.works {
		base := w.base
		if base == nil {
			base = foldstate.NewEntry[*jobCached](w.key, nil, w.seq, false)
		}
		t.f.cache.Put(base.Successor(w.next, w.seq+1, w.save, now, w.positions))
	}
}

// hits splits the jobs into those whose fold can start from the cached head checkpoint and those to load: a
// job whose batch changed a run starting before the cached head, or whose datasets' cuts or fields changed
// (q.full), is loaded as before.
func (t *jobTx) hits(jobs []string, q jobQueue) (map[string]*jobEntry, []string) {
	hits := map[string]*jobEntry{}
	var miss []string
	for _, k := range jobs {
		e := t.lookup(k)
		changed, ok := q.since[k]
		if e == nil || q.full[k] || (ok && changed < e.Value.ck.At) {
			miss = append(miss, k)
			continue
		}
		hits[k] = e
	}
	return hits, miss
}

// runsInMemory are the job's runs since its cached head: the cached ones the batch did not change, and the ones
// it changed that are now the job's (a run another job's events re-filed leaves it), sorted as loadJobRuns sorts.
// changed are the runs the run step folded, by run key.
func runsInMemory(k string, c *jobCached, changed map[string]*fold.RunState) []fold.Run {
	out := make([]fold.Run, 0, len(c.runs)+1)
	for key, r := range c.runs {
		if _, ok := changed[key]; !ok {
			out = append(out, r)
		}
	}
	for _, st := range changed {
		if st.JobKey == k {
			out = append(out, jobRunOf(st))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// jobRunOf is what loadJobRuns reads back of a run the run step has just written (runRow, ioRows). The run is
// kept in the job fold state, so it owns its strings: the run step's values share the event's source bytes (the
// decoder's strings point into them), and one such string held would keep the whole event in memory for as long
// as the job stays cached (measured: ~9 KB a job, more than the state itself; TestJobStateSizeEstimatesTheResidentHeap).
func jobRunOf(s *fold.RunState) fold.Run {
	id := s.RunID
	if id == "" {
		id = s.Key
	}
	r := fold.Run{Key: strings.Clone(s.Key), ID: strings.Clone(id), State: strings.Clone(s.State),
		Start: s.FirstEventAt, Last: s.LastEventTime, Streaming: s.ProcessingType == "STREAMING"}
	if s.EndedAt != nil {
		r.Ended = *s.EndedAt
	}
	if s.DefHash != "" && s.JobKey != "" {
		r.JobVersion = graph.JobVersionKey(s.JobKey, s.DefHash)
	}
	for _, dir := range []string{graph.RelRead, graph.RelWrote} {
		m := s.Inputs
		if dir == graph.RelWrote {
			m = s.Outputs
		}
		for _, ds := range sortedIOKeys(m) {
			io := m[ds]
			x := fold.IO{Dir: dir, DS: strings.Clone(ds), FirstAt: io.FirstAt, LastAt: io.LastAt,
				Producer: strings.Clone(io.Producer), Version: strings.Clone(io.Version)}
			for _, id := range io.EventIDs {
				x.EventIDs = append(x.EventIDs, strings.Clone(id))
			}
			if dir == graph.RelWrote {
				x.Pub = strings.Clone(io.Publication)
				if io.Col != nil {
					x.Cols = fold.DecodeCols(encodeCols(io.Col))
				}
			} else {
				x.Pub = fold.RunPub(r.State, r.Streaming, "")
			}
			r.IO = append(r.IO, x)
		}
	}
	sort.Slice(r.IO, func(i, j int) bool { return r.IO[i].Dir+r.IO[i].DS < r.IO[j].Dir+r.IO[j].DS })
	return r
}

// withExistingDatasets drops the rows of datasets with no node (writeRunIO cannot write them, so loadJobRuns
// never reads them); exists is a key of every dataset node the runs name (loadDatasetsOf's fieldsSig map).
func withExistingDatasets(runs []fold.Run, exists map[string]string) []fold.Run {
	for i := range runs {
		keep := true
		for _, io := range runs[i].IO {
			if _, ok := exists[io.DS]; !ok {
				keep = false
				break
			}
		}
		if keep {
			continue
		}
		ios := make([]fold.IO, 0, len(runs[i].IO))
		for _, io := range runs[i].IO {
			if _, ok := exists[io.DS]; ok {
				ios = append(ios, io)
			}
		}
		runs[i].IO = ios
	}
	return runs
}

// freshDecls are the job's JobEvents among the events this batch claimed, as loadJobDecls reads them back.
func freshDecls(k string, fresh []*rec) []fold.Decl {
	var out []fold.Decl
	for _, r := range fresh {
		if r.Kind == string(olevent.KindJob) && r.Job != nil && r.Job.Key == k {
			// owned strings, as jobRunOf's: the decl is kept in the job fold state
			out = append(out, fold.Decl{ID: strings.Clone(r.ID), Producer: strings.Clone(r.Producer), T: r.Time,
				Inputs: ownedKeys(okKeys(r.Inputs)), Outputs: ownedKeys(okKeys(r.Outputs))})
		}
	}
	return out
}

// ownedKeys is the set with its keys copied out of whatever memory they shared (freshDecls).
func ownedKeys(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[strings.Clone(k)] = v
	}
	return out
}

// jobPositions are, per job, the source positions of the batch's claimed events that name it.
func jobPositions(fresh []*rec) map[string][]foldstate.Pos {
	out := map[string][]foldstate.Pos{}
	for _, r := range fresh {
		if r.Job != nil && r.pos.Part != "" {
			out[r.Job.Key] = append(out[r.Job.Key], r.pos)
		}
	}
	return out
}

// jobRow is the fenced write of one job: the evidence properties that changed since the cached last write (all
// of them after a load) and the head checkpoint when it is saved now.
func (t *jobTx) jobRow(d *jobWork, ev map[string]any, last map[string]any) (map[string]any, error) {
	if t == nil || t.f.disabled {
		d.save = true
	}
	props := map[string]any{}
	for k, v := range ev {
		if last == nil || !sameProp(last[k], v) {
			props[k] = v
		}
	}
	if d.save {
		enc, err := encodeCheckpoint(d.next.ck)
		if err != nil {
			return nil, err
		}
		props["edgeCkpt"] = enc
		props["projSnap"] = d.seq + 1 // the stamp the saved head is current at (the write sets projSeq to it)
	}
	if t != nil {
		t.works[d.key] = d
	}
	ds := make([]any, 0, len(d.datasets))
	for _, k := range ordered.Keys(d.datasets) {
		ds = append(ds, map[string]any{"k": k, "seq": d.datasets[k]})
	}
	return map[string]any{"job": d.key, "seq": d.seq, "props": props, "ds": ds}, nil
}

// writeFencedJobs runs the fenced job writes; a refused one aborts the transaction with a jobFencedError. A job
// with no node (none is expected: every folded job was merged) is neither written nor refused.
func (w *txWriter) writeFencedJobs(name string, rows []any) error {
	if len(rows) == 0 {
		return nil
	}
	out, err := w.runAs(name, `UNWIND $rows AS row
		MATCH (j:Job {key: row.job})
		SET j.projLock = true REMOVE j.projLock
		WITH j, row, [x IN row.ds WHERE NOT EXISTS {
			MATCH (d:Dataset {key: x.k}) WHERE coalesce(d.projSeq, 0) = x.seq } | x.k] AS moved
		WITH j, row, moved, coalesce(j.projSeq, 0) = row.seq AND size(moved) = 0 AS ok
		FOREACH (_ IN CASE WHEN ok THEN [1] ELSE [] END | SET j += row.props, j.projSeq = row.seq + 1)
		RETURN row.job AS job, ok, moved`, map[string]any{"rows": rows})
	if err != nil {
		return err
	}
	fe := &jobFencedError{}
	for _, r := range out {
		k, _ := r.Get("job")
		if ok, _ := r.Get("ok"); ok != true {
			fe.keys = append(fe.keys, asStr(k))
		}
		moved, _ := r.Get("moved")
		for _, ds := range moved.([]any) {
			if fe.datasets == nil {
				fe.datasets = map[string]int64{}
			}
			fe.datasets[asStr(ds)] = datasetStampOf(rows, asStr(k), asStr(ds))
		}
	}
	if len(fe.keys) == 0 {
		return nil
	}
	if w.jobs != nil {
		w.jobs.err = fe
	}
	if w.fold != nil && len(fe.datasets) > 0 {
		w.fold.moved = fe.datasets
	}
	return fe
}

// datasetStampOf is the stamp job k's row fenced dataset ds on.
func datasetStampOf(rows []any, k, ds string) int64 {
	for _, r := range rows {
		row := r.(map[string]any)
		if row["job"] != k {
			continue
		}
		for _, x := range row["ds"].([]any) {
			if m := x.(map[string]any); m["k"] == ds {
				return m["seq"].(int64)
			}
		}
	}
	return -1
}

// saveJobs adds the fenced checkpoint writes of the given dirty entries this transaction did not fold.
func (w *txWriter) saveJobs(kind string, entries []*jobEntry) error {
	t := w.jobs
	if t == nil || t.f.disabled {
		return nil
	}
	var rows []any
	for _, e := range entries {
		if t.works[e.Key] != nil {
			continue
		}
		d := &jobWork{key: e.Key, base: e, seq: e.Seq, next: e.Value, save: true}
		row, err := t.jobRow(d, nil, nil)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	t.f.saves.WithLabelValues(kind).Add(float64(len(rows)))
	return w.writeFencedJobs("saveJobStates", rows)
}

// jobSaveEvery is the longest a job's head checkpoint stays written behind: a dirty entry is saved by the first
// transaction after this (and beyond the cache's capacity, at a rebalance and at shutdown). Unlike a dataset's
// snapshot (foldstate.SnapshotEvery) it holds back no replay point: what it bounds is how many runs a reload
// after a crash folds again (those since the stored head). At foldstate.SnapshotEvery a job touched less often
// than once a minute was saved once per touch, a minute late: the largest statement of the profile
// (saveJobStates, docs/adr/0079-job-state-saved-write-behind.md).
const jobSaveEvery = 10 * time.Minute

// dueWithChange reports whether a held job's head has been written behind for jobSaveEvery. saveDueJobs skips the
// jobs the transaction folds, so a job folded in every batch would otherwise stay unsaved for as long as it stays
// busy (and a reload after a crash would fold every run since): it is saved with this change instead.
func (t *jobTx) dueWithChange(e *jobEntry) bool {
	if t == nil || t.f.disabled || e == nil {
		return false
	}
	since := e.DirtySince()
	return !since.IsZero() && t.f.now().Sub(since) >= jobSaveEvery
}

// saveDueJobs saves the dirty job entries that are due: dirty for jobSaveEvery, or beyond the cache's capacity.
func (w *txWriter) saveDueJobs() error {
	if w.jobs == nil || w.jobs.f.disabled {
		return nil
	}
	return w.saveJobs("due", w.jobs.f.cache.Due(w.jobs.f.now(), jobSaveEvery))
}
