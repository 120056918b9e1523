package project

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/foldstate"
)

// The datasets' fold state (dsState) lives in the projector's memory (ingest/foldstate) between transactions, so
// a batch neither reads it back from Neo4j under the dataset's write lock nor rewrites the whole blob to add one
// observation (docs/adr/0036-in-memory-dataset-fold-state.md). What the transaction writes:
//
//   - the derived properties that changed since the last write (cuts, facets, fieldsSig, ...), and the Field
//     rows only when the fields change (as before), in one statement guarded by the node's version stamp:
//     `WHERE d.projSeq = $seq SET ..., d.projSeq = $seq + 1`. A refused write (another writer: a second instance,
//     a former owner of the partition) aborts the transaction; the entry is reloaded and the batch retried.
//   - the snapshot (projState, and projSnap = the stamp it was saved at) write-behind: only when the state is
//     dirty and at most every foldstate.SnapshotEvery per dataset, on eviction, at a rebalance or shutdown, and
//     always with the change for events without a source position, for a shared entry (another writer was
//     seen), and when the log is sealed or restored or an event arrives below the state's covered offset.
//   - in the same transaction, per source partition, the replay point (ProjectorProgress {partition, offset}):
//     the lowest offset folded into a state not yet saved. After a crash the consumer rewinds each partition it
//     owns to it; an event already projected is then re-folded into the datasets whose snapshot does not cover it
//     (dsState.Off, per partition the next offset the snapshot covers), read from its stored payload, so the
//     state is exactly the snapshot plus what came after. Graph writes set derived values, so re-deriving them is
//     idempotent.
//
// A loader that finds a snapshot older than the node's stamp (projSnap < projSeq: someone holds unsaved changes,
// or crashed holding them) marks the entry shared. A writer whose write is refused keeps its unsaved changes
// (pending) and re-applies them onto the reloaded snapshot, so two writers of one dataset converge on the state
// holding both their observations.

// maxFenceRetries bounds how often a batch is retried after its fenced write was refused.
const maxFenceRetries = 10

// errFenced means a fenced write found another version stamp: the cached state was stale.
var errFenced = errors.New("fold state: the node was written by another writer")

// fencedError names the datasets whose write was refused.
type fencedError struct{ keys []string }

func (e *fencedError) Error() string { return fmt.Sprintf("%v: %v", errFenced, e.keys) }
func (e *fencedError) Unwrap() error { return errFenced }

// dsCached is a dataset's cached fold state. Values are immutable once in the cache.
type dsCached struct {
	st      *dsState
	pending []*dsChange    // changes folded since the snapshot, re-applied after a refused write
	last    map[string]any // the derived properties last written (nil: unknown, write them all)
	stale   bool           // the node was written by another writer: reload, then re-apply pending
	// hists are the field histories the node's Field nodes hold (as the job folds read them: jobdatasets.go),
	// when histsKnown.
	hists      []fold.FieldHist
	histsKnown bool
}

type dsEntry = foldstate.Entry[*dsCached]

// dsWork is one dataset in one transaction attempt: a working copy of its state and what to write.
type dsWork struct {
	key       string
	base      *dsEntry // the entry it started from (a fresh one when loaded)
	seq       int64    // the stamp the write is guarded by
	st        *dsState
	changes   []*dsChange // this attempt's changes (after the pending ones)
	positions []foldstate.Pos
	save      bool // write the snapshot with this change
	written   bool // the transaction writes the node (only written work is installed)
	loaded    bool // read from the node in this attempt (not from the cache)
	wrote     map[string]any
	// hists are the field histories after this attempt's change (deriveDataset), when histsKnown; otherwise
	// the fields did not change and the base entry's are still the node's.
	hists      []fold.FieldHist
	histsKnown bool
}

// dsFoldState is the projector's dataset fold state.
type dsFoldState struct {
	cache *foldstate.Cache[*dsCached]
	// mu guards progress and inflight. A transaction locks the ProjectorProgress nodes it will write before it
	// computes their replay points, and its unsaved changes count as in flight from then until they are in the
	// cache, so a replay point written never skips another transaction's committed unsaved change, and
	// transactions of other partitions never wait for each other's commit.
	mu        sync.Mutex
	progress  map[string]int64 // the replay points last written
	inflight  map[*foldTx]bool // transactions between their replay points and their installation
	held      map[string]int   // per dataset, the transactions in progress holding it in their work (dueToSave)
	stale     map[string]bool  // datasets marked stale with unsaved changes, to refold (staleDirty)
	now       func() time.Time
	requests  prometheus.Counter
	hits      prometheus.Counter
	conflicts prometheus.Counter
	entries   prometheus.GaugeFunc
	bytes     prometheus.GaugeFunc
	saves     *prometheus.CounterVec
	disabled  bool // tests: no cache (every batch loads and saves, as before)
}

// newFoldState builds the fold state bounded by the states' resident bytes (dsCached.Size; foldstate.NewSized).
func newFoldState(maxBytes int64) *dsFoldState {
	f := &dsFoldState{progress: map[string]int64{}, inflight: map[*foldTx]bool{}, held: map[string]int{},
		stale: map[string]bool{}, now: time.Now,
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_dataset_state_requests_total",
			Help: "Dataset fold-state lookups in the projector's memory."}),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_dataset_state_hits_total",
			Help: "Dataset fold-state lookups answered from memory (the others load the snapshot from Neo4j)."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_projector_fence_conflicts_total",
			Help: "Batches retried because a fenced write found another writer's version stamp."}),
		saves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_projector_dataset_state_saves_total",
			Help: "Dataset fold-state writes, by whether the snapshot was saved (saved) or only the derived values " +
				"(behind)."}, []string{"kind"}),
	}
	f.cache = foldstate.NewSized[*dsCached](maxBytes, foldStats{f})
	f.entries = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_dataset_state_entries",
		Help: "Datasets whose fold state the projector holds in memory."}, func() float64 { return float64(f.cache.Len()) })
	f.bytes = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "headwater_projector_dataset_state_bytes",
		Help: "Estimated resident bytes of the dataset fold state in memory (bounded by --consumer-fold-state-mib)."},
		func() float64 { return float64(f.cache.Bytes()) })
	return f
}

func (f *dsFoldState) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.requests, f.hits, f.conflicts, f.entries, f.bytes, f.saves}
}

type foldStats struct{ f *dsFoldState }

func (s foldStats) Hit()  { s.f.requests.Inc(); s.f.hits.Inc() }
func (s foldStats) Miss() { s.f.requests.Inc() }

// foldAttempt spans one Projector.write: the transaction callback may run several times (driver retries).
type foldAttempt struct {
	f  *dsFoldState
	tx *foldTx // the last callback's work
}

func (f *dsFoldState) attempt() *foldAttempt { return &foldAttempt{f: f} }

// foldTx is one transaction callback's dataset work.
type foldTx struct {
	a     *foldAttempt
	works map[string]*dsWork
	marks map[string]int64 // the replay points this transaction writes (f.mu)
	dirt  map[string]int64 // per partition, the lowest offset its written states leave unsaved (f.mu)
	holds []string         // the datasets it counts in f.held (f.mu)
	gone  []string         // stale entries to refold whose node no longer exists (dropped at commit)
	moved map[string]int64 // datasets a refused job write found moved, with the stamp they were served at
	err   error
}

// hold counts the datasets as held by the transaction until it settles.
func (f *dsFoldState) hold(t *foldTx, keys []string) {
	if f.disabled || len(keys) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		f.held[k]++
	}
	t.holds = append(t.holds, keys...)
}

// release ends the transaction's holds (f.mu held).
func (f *dsFoldState) release(t *foldTx) {
	for _, k := range t.holds {
		if f.held[k]--; f.held[k] <= 0 {
			delete(f.held, k)
		}
	}
	t.holds = nil
}

func (a *foldAttempt) begin() *foldTx {
	if a.tx != nil { // the driver retries the transaction: the last callback did not commit
		a.f.settle(a.tx, nil)
	}
	a.tx = &foldTx{a: a, works: map[string]*dsWork{}}
	return a.tx
}

// writeFenced is write, retried while fenced writes are refused (each retry reloads the refused datasets).
func (p *Projector) writeFenced(ctx context.Context, batch []Envelope, recs []*rec) (Result, error) {
	for i := 0; ; i++ {
		res, err := p.write(ctx, batch, recs)
		if !errors.Is(err, errFenced) || i >= maxFenceRetries {
			return res, err
		}
		p.fold.conflicts.Inc()
		if _, ok := errors.AsType[*jobFencedError](err); ok {
			p.jobs.conflicts.Inc()
		}
		p.log.Info("fenced write refused; reloading and retrying", "err", err, "attempt", i+1)
		if recs, err = p.prepare(batch); err != nil { // identities are resolved into recs: start afresh
			return Result{}, err
		}
	}
}

// end installs a committed transaction's states into the cache (or, after a refused write, marks the refused
// entries stale), then records its replay points and ends its in-flight registration.
func (a *foldAttempt) end(committed bool) {
	t := a.tx
	if t == nil || a.f.disabled {
		return
	}
	if !committed {
		if fe, ok := errors.AsType[*fencedError](t.err); ok {
			a.f.markStale(fe.keys, t.works)
		}
		for k, seq := range t.moved {
			if e := a.f.cache.Peek(k); e != nil && e.Seq == seq && !e.Value.stale {
				a.f.markEntryStale(k, e)
			}
		}
		a.f.settle(t, nil)
		return
	}
	now := a.f.now()
	for _, w := range t.works {
		if w.written {
			a.f.cache.Put(w.successor(now))
		}
	}
	for _, k := range t.gone {
		if e := a.f.cache.Peek(k); e != nil && e.Value.stale {
			a.f.cache.Remove(k)
		}
	}
	a.f.settle(t, t.marks)
}

// settle ends a transaction's in-flight registration and records the replay points it committed.
func (f *dsFoldState) settle(t *foldTx, marks map[string]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.inflight, t)
	f.release(t)
	for part, off := range marks {
		if off < 0 {
			delete(f.progress, part)
		} else {
			f.progress[part] = off
		}
	}
}

// successor is the cache entry after the work's write.
func (w *dsWork) successor(now time.Time) *dsEntry {
	v := &dsCached{st: w.st, last: w.wrote, hists: w.hists, histsKnown: w.histsKnown}
	if !w.histsKnown && w.base.Value != nil {
		v.hists, v.histsKnown = w.base.Value.hists, w.base.Value.histsKnown
	}
	if !w.save {
		v.pending = append(append([]*dsChange(nil), w.base.Value.pending...), w.changes...)
	}
	return w.base.Successor(v, w.seq+1, w.save, now, w.positions)
}

// markStale keeps the refused entries' unsaved changes and marks them to be reloaded (and written through).
func (f *dsFoldState) markStale(keys []string, works map[string]*dsWork) {
	for _, k := range keys {
		w := works[k]
		e := f.cache.Peek(k)
		if w == nil || e == nil || e.Seq != w.seq {
			continue // not cached, or a concurrent transaction of ours already moved it on
		}
		f.markEntryStale(k, e)
	}
}

// markEntryStale replaces the entry by one to reload, keeping its unsaved changes.
func (f *dsFoldState) markEntryStale(k string, e *dsEntry) {
	n := e.Successor(&dsCached{st: e.Value.st, pending: e.Value.pending, stale: true}, e.Seq, !e.Dirty(), f.now(), nil)
	n.Shared = true
	f.cache.Put(n)
	if n.Dirty() {
		f.mu.Lock()
		f.stale[k] = true
		f.mu.Unlock()
	}
}

// datasetStates returns the working state of each dataset that exists: from the cache, else loaded from its
// node. Work already begun in this attempt is reused.
func (w *txWriter) datasetStates(keys []string) (map[string]*dsState, error) {
	t := w.fold
	out := map[string]*dsState{}
	var miss, held []string
	defer func() { t.a.f.hold(t, held) }()
	for _, k := range keys {
		if d := t.works[k]; d != nil {
			out[k] = d.st
			continue
		}
		if e := t.a.f.cachedEntry(k); e != nil {
			d := &dsWork{key: k, base: e, seq: e.Seq, st: e.Value.st.clone()}
			t.works[k], out[k] = d, d.st
			held = append(held, k)
			continue
		}
		miss = append(miss, k)
	}
	if len(miss) == 0 {
		return out, nil
	}
	loaded, err := w.loadDatasetStates(miss)
	for k, d := range loaded {
		t.works[k], out[k] = d, d.st
		held = append(held, k)
	}
	return out, err
}

// cachedEntry is the key's usable cache entry (nil when missing, stale, or the cache is off).
func (f *dsFoldState) cachedEntry(k string) *dsEntry {
	if f.disabled {
		return nil
	}
	e := f.cache.Get(k)
	if e == nil || e.Value.stale {
		return nil
	}
	return e
}

// loadDatasetStates reads the snapshots of datasets not in memory (no lock: the fenced write is the check).
func (w *txWriter) loadDatasetStates(keys []string) (map[string]*dsWork, error) {
	sort.Strings(keys)
	rows, err := w.runAs("loadDatasetStates", `UNWIND $keys AS k
		MATCH (d:Dataset {key: k})
		RETURN k, d.projState AS state, coalesce(d.projSeq, 0) AS seq, coalesce(d.projSnap, 0) AS snap`,
		map[string]any{"keys": toAny(keys)})
	if err != nil {
		return nil, err
	}
	out := map[string]*dsWork{}
	for _, r := range rows {
		k, _ := r.Get("k")
		s, _ := r.Get("state")
		seq, _ := r.Get("seq")
		snap, _ := r.Get("snap")
		st, err := decodeState(s)
		if err != nil {
			return nil, fmt.Errorf("dataset %s: %w", asStr(k), err)
		}
		key := asStr(k)
		// A snapshot older than the stamp: another writer holds (or crashed holding) unsaved changes.
		behind := asInt(seq) != asInt(snap)
		base := foldstate.NewEntry[*dsCached](key, &dsCached{}, asInt(seq), behind)
		if old := w.fold.a.f.cache.Peek(key); old != nil && !w.fold.a.f.disabled {
			// A refused write's entry: its pending changes are re-applied onto this state, which then covers
			// what the entry covered.
			base = old.Successor(&dsCached{pending: old.Value.pending}, asInt(seq), !old.Dirty(), w.fold.a.f.now(), nil)
			base.Shared = base.Shared || behind
			if len(old.Value.pending) > 0 && old.Value.st != nil {
				for part, off := range old.Value.st.Off {
					if st.Off == nil {
						st.Off = map[string]int64{}
					}
					st.Off[part] = max(st.Off[part], off)
				}
			}
		}
		out[key] = &dsWork{key: key, base: base, seq: asInt(seq), st: st, loaded: true}
	}
	return out, nil
}

// datasetChanges gathers each dataset's change: the pending changes of a reloaded entry, the fresh events', and
// the replayed events' a dataset's snapshot does not cover, and an empty one for each refused dataset to refold
// (refold) with nothing pending.
func (w *txWriter) datasetChanges(fresh, replayed []*rec, refold []string) (map[string]*dsChange, error) {
	perRec := make([]map[string]*dsChange, 0, len(fresh)+len(replayed))
	keySet := map[string]bool{}
	all := append(append([]*rec(nil), fresh...), replayed...)
	for _, r := range all {
		c := changesOf([]*rec{r})
		perRec = append(perRec, c)
		for k := range c {
			keySet[k] = true
		}
	}
	for _, k := range refold {
		keySet[k] = true
	}
	keys := sortedKeys(keySet)
	states, err := w.datasetStates(keys)
	if err != nil {
		return nil, err
	}
	out := map[string]*dsChange{}
	for k := range states {
		if d := w.fold.works[k]; d.loaded {
			for _, p := range d.base.Value.pending { // a refused write's unsaved changes, onto the reloaded state
				addChange(out, k, p)
			}
		}
	}
	for _, k := range refold {
		switch d := w.fold.works[k]; {
		case d == nil:
			w.fold.gone = append(w.fold.gone, k) // no such node any more: nothing to write its changes onto
		case d.loaded && out[k] == nil:
			addChange(out, k, &dsChange{}) // written (and saved) even with nothing pending: its entry is stale
		}
	}
	for i, r := range all {
		isReplay := i >= len(fresh)
		for k, c := range perRec[i] {
			d := w.fold.works[k]
			if d == nil {
				continue // no such node (unbound): nothing is written for it, as before
			}
			if !d.fold(r, isReplay) {
				continue
			}
			addChange(out, k, c)
			d.changes = append(d.changes, c)
		}
	}
	return out, nil
}

// fold decides whether the event's observations go into the dataset's state and records its position: a fresh
// event always, a replayed one only at or after the offset the state covers for its partition.
func (d *dsWork) fold(r *rec, replay bool) bool {
	p := r.pos
	if p.Part == "" {
		d.save = true // no replayable source: saved with the change
		return !replay
	}
	covered := d.st.Off[p.Part]
	if replay && p.Offset < covered {
		return false
	}
	if !replay && p.Offset < covered {
		d.save = true // below what the saved snapshot may claim to cover: save it
	}
	if d.st.Off == nil {
		d.st.Off = map[string]int64{}
	}
	d.st.Off[p.Part] = max(covered, p.Offset+1)
	d.positions = append(d.positions, p)
	return true
}

func addChange(out map[string]*dsChange, k string, c *dsChange) {
	dst := out[k]
	if dst == nil {
		dst = &dsChange{meta: map[string]stamped{}, facets: map[string]stamped{}}
		out[k] = dst
	}
	dst.obs = append(dst.obs, c.obs...)
	for mk, v := range c.meta {
		setStamped(dst.meta, mk, v)
	}
	for fk, v := range c.facets {
		setStamped(dst.facets, fk, v)
	}
	dst.versions = append(dst.versions, c.versions...)
	dst.tags = append(dst.tags, c.tags...)
	dst.blocks = append(dst.blocks, c.blocks...)
	dst.ice = dst.ice.merge(c.ice) // merge makes dst's own maps: c's are never changed
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clone is a copy the transaction may change: the log and the maps are copied, their values (schemas, stamped
// values, the sealed base) are never changed in place.
func (st *dsState) clone() *dsState {
	c := *st
	c.DatasetLog = st.Clone() // fold.DatasetLog.Clone: the log and the schema map copied
	c.Meta = maps.Clone(st.Meta)
	c.Facets = maps.Clone(st.Facets)
	c.Off = maps.Clone(st.Off)
	c.Tags = slices.Clone(st.Tags)
	c.Blocks = slices.Clone(st.Blocks)
	if c.Meta == nil {
		c.Meta = map[string]stamped{}
	}
	if c.Facets == nil {
		c.Facets = map[string]stamped{}
	}
	return &c
}

// datasetRow is the fenced write of one dataset: the derived properties that changed, and the snapshot when it
// is saved now.
func (t *foldTx) datasetRow(d *dsWork, props map[string]any, now time.Time) (map[string]any, error) {
	last := d.base.Value.last
	if t.a.f.disabled || d.base.Shared || d.base.Value.stale {
		d.save = true
	}
	if since := d.base.DirtySince(); !since.IsZero() && now.Sub(since) >= foldstate.SnapshotEvery {
		d.save = true
	}
	write := map[string]any{}
	for k, v := range props {
		if last == nil || !sameProp(last[k], v) {
			write[k] = v
		}
	}
	if d.save {
		enc, err := d.encode()
		if err != nil {
			return nil, err
		}
		write["projState"], write["projSnap"] = enc, d.seq+1
	}
	d.wrote, d.written = props, true
	return map[string]any{"key": d.key, "seq": d.seq, "props": write}, nil
}

// encode is the work's snapshot. A state taken from the cache unchanged (a due save) may be read by other
// transactions, so its log is sorted in a copy.
func (d *dsWork) encode() ([]byte, error) {
	if d.base.Value != nil && d.st == d.base.Value.st {
		c := *d.st
		c.Log = slices.Clone(d.st.Log)
		return c.encode()
	}
	return d.st.encode()
}

// writeFencedDatasets runs the fenced writes; a refused one aborts the transaction with a fencedError.
func (w *txWriter) writeFencedDatasets(rows []any) error {
	if len(rows) == 0 {
		return nil
	}
	out, err := w.runAs("writeDatasets:props", `UNWIND $rows AS row
		MATCH (d:Dataset {key: row.key})
		SET d.projLock = true REMOVE d.projLock
		WITH d, row WHERE coalesce(d.projSeq, 0) = row.seq
		SET d += row.props, d.projSeq = row.seq + 1
		RETURN row.key AS key`, map[string]any{"rows": rows})
	if err != nil {
		return err
	}
	if len(out) == len(rows) {
		return nil
	}
	done := map[string]bool{}
	for _, r := range out {
		k, _ := r.Get("key")
		done[asStr(k)] = true
	}
	fe := &fencedError{}
	for _, r := range rows {
		if k := r.(map[string]any)["key"].(string); !done[k] {
			fe.keys = append(fe.keys, k)
		}
	}
	w.fold.err = fe
	return fe
}

// seal ends the transaction's fold-state work: it saves the dirty entries that are due (dirty for
// SnapshotEvery, or beyond the cache's capacity), then writes the partitions' replay points.
func (a *foldAttempt) seal(w *txWriter) error {
	if a.f.disabled {
		return nil
	}
	t := w.fold
	if err := t.saveDue(w); err != nil {
		return err
	}
	return t.writeMarks(w)
}

// saveDue adds the fenced snapshot writes of due dirty entries this transaction did not touch.
func (t *foldTx) saveDue(w *txWriter) error {
	now := t.a.f.now()
	var rows []any
	for _, e := range t.a.f.dueToSave(t, now) {
		d := &dsWork{key: e.Key, base: e, seq: e.Seq, st: e.Value.st, save: true}
		row, err := t.datasetRow(d, e.Value.last, now)
		if err != nil {
			return err
		}
		t.works[e.Key] = d
		rows = append(rows, row)
	}
	t.a.f.saves.WithLabelValues("due").Add(float64(len(rows)))
	return w.writeFencedDatasets(rows)
}

// dueToSave are the due entries (foldstate.Cache.Due) transaction t saves: not those it touched, not stale ones,
// and not those another transaction in progress holds. That one locks the dataset's node when it writes it, and
// saves the snapshot with its change when it is due, so a transaction saving it here would wait for that one's
// commit under the lock (an express transaction behind a backlogged producer's share, ADR 0023), then find its
// stamp moved and be retried (docs/adr/0046-memory-bounds-by-bytes.md).
// The entries returned are held by t from then on.
func (f *dsFoldState) dueToSave(t *foldTx, now time.Time) []*dsEntry {
	entries := f.cache.Due(now, foldstate.SnapshotEvery)
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*dsEntry
	for _, e := range entries {
		if t.works[e.Key] != nil || e.Value.stale || f.held[e.Key] > 0 {
			continue
		}
		out = append(out, e)
		f.held[e.Key]++
		t.holds = append(t.holds, e.Key)
	}
	return out
}

// writeMarks writes, per partition whose replay point this transaction moves, the lowest offset folded into a
// state still unsaved after it (-1: none), counting other transactions' unsaved changes still in flight. The
// partitions' ProjectorProgress nodes are locked before their points are computed again, so of two transactions
// writing one partition's point the later computes after the earlier committed.
func (t *foldTx) writeMarks(w *txWriter) error {
	f := t.a.f
	replaced := map[string]*dsEntry{}
	now := f.now()
	var mine []*dsEntry
	for k, d := range t.works {
		if d.written {
			replaced[k] = d.successor(now)
			mine = append(mine, replaced[k])
		}
	}
	f.mu.Lock()
	t.dirt, f.inflight[t] = foldstate.Marks(mine...), true
	changed := f.changedMarks(replaced, t)
	f.mu.Unlock()
	if len(changed) == 0 {
		return nil
	}
	parts := make([]any, 0, len(changed))
	for part := range changed {
		parts = append(parts, part)
	}
	if _, err := w.runAs("writeReplayPoints", `UNWIND $parts AS part
		MERGE (p:ProjectorProgress {partition: part}) SET p.lock = true REMOVE p.lock`,
		map[string]any{"parts": parts}); err != nil {
		return err
	}
	f.mu.Lock()
	marks := f.marks(replaced, t)
	t.marks = map[string]int64{}
	rows := make([]any, 0, len(changed))
	for part := range changed {
		off, ok := marks[part]
		if !ok {
			off = -1
		}
		t.marks[part] = off
		rows = append(rows, map[string]any{"part": part, "offset": off})
	}
	f.mu.Unlock()
	_, err := w.runAs("writeReplayPoints", `UNWIND $rows AS row
		MATCH (p:ProjectorProgress {partition: row.part}) SET p.offset = row.offset`, map[string]any{"rows": rows})
	return err
}

// marks are the replay points once replaced are in the cache, with the other transactions' in-flight changes
// (f.mu held).
func (f *dsFoldState) marks(replaced map[string]*dsEntry, self *foldTx) map[string]int64 {
	marks := f.cache.WatermarksWith(replaced)
	for t := range f.inflight {
		if t == self {
			continue
		}
		for part, off := range t.dirt {
			if w, ok := marks[part]; !ok || off < w {
				marks[part] = off
			}
		}
	}
	return marks
}

// changedMarks are the partitions whose replay point differs from the one last written (f.mu held).
func (f *dsFoldState) changedMarks(replaced map[string]*dsEntry, self *foldTx) map[string]bool {
	marks := f.marks(replaced, self)
	out := map[string]bool{}
	for part, off := range marks {
		if old, ok := f.progress[part]; !ok || old != off {
			out[part] = true
		}
	}
	for part := range f.progress {
		if _, ok := marks[part]; !ok {
			out[part] = true
		}
	}
	// A partition another transaction in flight writes or leaves dirt in: its last written point is not known
	// here, so write it (after its lock) rather than trust progress.
	for t := range f.inflight {
		if t == self {
			continue
		}
		for part := range t.marks {
			out[part] = true
		}
		for part := range t.dirt {
			out[part] = true
		}
	}
	return out
}

// ReplayPoint is where the consumer must start reading a partition so every change not in a saved snapshot is
// folded again (ProjectorProgress.offset); ok is false when nothing of the partition is unsaved.
func (p *Projector) ReplayPoint(ctx context.Context, topic string, partition int32) (int64, bool, error) {
	rows, err := p.store.ReadRecords(ctx, `MATCH (p:ProjectorProgress {partition: $part}) RETURN p.offset AS offset`,
		map[string]any{"part": PartitionName(topic, partition)})
	if err != nil || len(rows) == 0 {
		return 0, false, err
	}
	off, _ := rows[0]["offset"].(int64)
	return off, off >= 0, nil
}

// PartitionName is how a source partition is named in positions and replay points.
func PartitionName(topic string, partition int32) string {
	return topic + "/" + strconv.Itoa(int(partition))
}

// SaveFoldState saves every unsaved dataset state (with the replay points) and job checkpoint in one
// transaction, and then drops from memory the entries holding events of the given partitions (all entries when parts is nil): at a rebalance
// their partitions may go to another instance, and at shutdown nothing is lost.
func (p *Projector) SaveFoldState(ctx context.Context, parts []string) error {
	if err := p.saveAll(ctx); err != nil {
		return err
	}
	if parts == nil {
		p.fold.cache.Clear()
		p.jobs.cache.Clear()
	} else {
		p.fold.cache.DropPartitions(parts)
		p.jobs.cache.DropPartitions(parts)
	}
	return nil
}

func (p *Projector) saveAll(ctx context.Context) error {
	for i := 0; ; i++ {
		if err := p.refoldStale(ctx); err != nil {
			return err
		}
		err := p.saveOnce(ctx)
		if err == nil && len(p.fold.staleDirty()) > 0 {
			err = errFenced // a save in this attempt was refused after all: refold those too
		}
		if !errors.Is(err, errFenced) || i >= maxFenceRetries {
			return err
		}
		p.fold.conflicts.Inc()
		if _, ok := errors.AsType[*jobFencedError](err); ok {
			p.jobs.conflicts.Inc()
		}
	}
}

// staleDirty are the datasets this instance holds unsaved changes of whose write or save was refused: another
// writer wrote the node (an instance that loaded its snapshot while these changes were unsaved, so derived the
// node's properties without them). Until they are refolded the graph lacks the changes (sorted keys).
func (f *dsFoldState) staleDirty() []string {
	if f.disabled {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.stale {
		if e := f.cache.Peek(k); e != nil && e.Dirty() && e.Value.stale {
			out = append(out, k)
		} else {
			delete(f.stale, k) // written since, or gone
		}
	}
	sort.Strings(out)
	return out
}

// refoldStale writes the stale dirty datasets again (docs/adr/0054-refused-saves-refold-the-holders-changes.md):
// a transaction with no events reloads each one's snapshot (now holding the other writer's observations),
// re-applies the changes this instance holds unsaved, writes every derived property, the Fields and the
// snapshot (the entry is shared, so written through), and refolds the jobs whose edges its cuts change; the
// touched nodes' generations are bumped as for a batch. A save that was refused used to be skipped, so the
// holder's observations stayed out of the graph until it touched the dataset again or another instance replayed
// its partition.
func (p *Projector) refoldStale(ctx context.Context) error {
	if len(p.fold.staleDirty()) == 0 {
		return nil
	}
	if err := p.writeNoEvents(ctx); err != nil {
		return fmt.Errorf("refold refused dataset states: %w", err)
	}
	return nil
}

// SaveDue runs a transaction of no events: it saves the dataset states and job checkpoints due for saving (dirty
// for foldstate.SnapshotEvery, or beyond the memory bound) and refolds the refused ones, as every batch does at
// its end. The consumer calls it on a timer, so an idle projector's unsaved changes, and another instance's
// writes that left them out, are settled within about SnapshotEvery instead of at its session's end
// (docs/adr/0054-refused-saves-refold-the-holders-changes.md).
func (p *Projector) SaveDue(ctx context.Context) error {
	if err := p.writeNoEvents(ctx); err != nil {
		return fmt.Errorf("save due fold state: %w", err)
	}
	return nil
}

// writeNoEvents is a fenced transaction of no events (refolds, due saves, replay points), with the touched nodes'
// generations bumped as for a batch.
func (p *Projector) writeNoEvents(ctx context.Context) error {
	res, err := p.writeFenced(ctx, nil, nil)
	if err != nil {
		return err
	}
	if len(res.Touched) > 0 {
		if err := p.gens.Bump(ctx, res.Touched); err != nil {
			return fmt.Errorf("%w: %w", ErrGenerationBump, err)
		}
	}
	return nil
}

func (p *Projector) saveOnce(ctx context.Context) error {
	fold := p.fold.attempt()
	var jobs *jobTx
	sess := p.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		w := &txWriter{ctx: ctx, tx: tx, statements: p.stmts, fold: fold.begin(), jobs: p.jobs.begin()}
		jobs = w.jobs
		if err := w.saveJobs("flush", p.jobs.cache.DirtyEntries()); err != nil {
			return nil, err
		}
		now := p.fold.now()
		var rows []any
		for _, e := range p.fold.cache.DirtyEntries() {
			if e.Value.stale {
				continue
			}
			d := &dsWork{key: e.Key, base: e, seq: e.Seq, st: e.Value.st, save: true}
			row, err := w.fold.datasetRow(d, e.Value.last, now)
			if err != nil {
				return nil, err
			}
			w.fold.works[e.Key] = d
			rows = append(rows, row)
		}
		p.fold.saves.WithLabelValues("flush").Add(float64(len(rows)))
		if err := w.writeFencedDatasets(rows); err != nil {
			return nil, err
		}
		return nil, fold.seal(w)
	}, neo4j.WithTxTimeout(p.store.TxTimeout()))
	fold.end(err == nil)
	jobs.end(err == nil)
	return err
}

// DropFoldState saves and forgets every dataset and job state held in memory (tests: the next batch loads from Neo4j).
func (p *Projector) DropFoldState(ctx context.Context) error { return p.SaveFoldState(ctx, nil) }

// posName is the event's source position as stored on its Event node ("" when it has none).
func (r *rec) posName() string {
	if r.pos.Part == "" {
		return ""
	}
	return r.pos.Part + "@" + strconv.FormatInt(r.pos.Offset, 10)
}

// replayed takes back an event read again from the position it was first projected from: its stored payload is
// the resolved form it was folded with.
func replayed(r *rec, payload any) (*rec, error) {
	stored, err := decodeRec(payload)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", r.ID, err)
	}
	stored.pos = r.pos
	return stored, nil
}

// sameProp reports whether a derived property's value is the one last written (scalars, strings and lists).
func sameProp(a, b any) bool { return reflect.DeepEqual(a, b) }
