package project

import (
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// projectJobEdges recomputes, for every affected job, its JobVersion validity, its OBSERVED and DECLARED
// INPUT_TO / OUTPUT_TO edges, its COLUMN_FEEDS and its INDIRECT_FEEDS from the job's runs and declarations.
// OBSERVED edges fold the runs at or after the job's checkpoint into it when every run the batch changed starts at
// or after it (the common, in-order case); otherwise, and for jobs with column lineage or whose datasets' cuts or
// fields changed, all runs are folded (see ingest/fold and docs/adr/0006-projection-and-intervals.md).
func (w *txWriter) projectJobEdges(plan jobPlan) error {
	jobs := ordered.Keys(plan.jobs)
	if len(jobs) == 0 {
		return nil
	}
	hits, miss := w.jobs.hits(jobs, plan.jobQueue)
	ckpts, seqs, behind, err := w.lockJobs(miss, plan.jobQueue)
	if err != nil {
		return err
	}
	for k, e := range hits {
		ckpts[k], seqs[k] = e.Value.ck, e.Seq
	}
	if err := w.closeVersions(jobs); err != nil {
		return err
	}
	runs, err := w.loadJobRuns(miss, ckpts)
	if err != nil {
		return err
	}
	for k, e := range hits {
		runs[k] = runsInMemory(k, e.Value, plan.runs)
	}
	cuts, hists, sigs, fences, err := w.datasetsForFold(runs, ckpts, hits)
	if err != nil {
		return err
	}
	for k := range hits {
		runs[k] = withExistingDatasets(runs[k], sigs)
	}
	if err := w.refoldChangedFields(runs, ckpts, cuts, hists, sigs, hits, fences); err != nil {
		return err
	}
	if err := w.attachSchemas(runs); err != nil { // ADR 0065 (schemarefs.go)
		return err
	}
	if w.stepTimes != nil {
		w.stepTimes["jobs folded from a checkpoint"] += time.Duration(len(ckpts))
		w.stepTimes["jobs folded in full"] += time.Duration(len(jobs) - len(ckpts))
	}
	if w.folds != nil {
		stored := 0
		for _, ck := range ckpts {
			if ck.FromStore {
				stored++
			}
		}
		w.folds.WithLabelValues("head").Add(float64(len(ckpts) - stored))
		w.folds.WithLabelValues("stored").Add(float64(stored))
		w.folds.WithLabelValues("full").Add(float64(len(jobs) - len(ckpts)))
		n := 0
		for _, rs := range runs {
			n += len(rs)
		}
		w.foldRuns.Add(float64(n))
	}
	var declMiss []string
	for _, k := range jobs {
		if hits[k] == nil {
			declMiss = append(declMiss, k)
		}
	}
	decls, err := w.loadJobDecls(declMiss)
	if err != nil {
		return err
	}
	for k, e := range hits {
		decls[k] = append(slices.Clip(e.Value.decls), freshDecls(k, plan.fresh)...)
	}
	positions := jobPositions(plan.fresh)
	var edges []fold.Edge
	var cols []fold.ColEdge
	var inds []fold.IndirectEdge
	var colOuts, stored []any
	works := make(map[string]*jobWork, len(jobs))
	evs := make(map[string]map[string]any, len(jobs))
	knownCols := map[string]map[string]any{}
	for _, k := range jobs {
		ck := ckpts[k]
		prev, lo, lv := map[string]*fold.EdgeAgg(nil), int64(math.MinInt64), fold.LatestVersionRef{}
		var prevCols map[string]*fold.ColAgg
		var prevInds map[string]*fold.IndAgg
		if ck != nil {
			prev, lo, lv, prevCols, prevInds = ck.Subjects, ck.At, ck.LatestVersion, ck.Cols, ck.Inds
		}
		observed := fold.EdgesFromAggs(fold.FoldObserved(prev, runs[k], cuts, lo, graph.OpenEnd))
		ev, observed := fold.SharedEvidence(observed)
		for _, e := range observed {
			e.Job = k
			edges = append(edges, e)
		}
		for _, e := range fold.DeclaredEdges(decls[k], lv.WithRuns(runs[k]).Version) {
			e.Job = k
			edges = append(edges, e)
		}
		next := fold.AdvanceCheckpoint(ck, runs[k], cuts, hists, sigs, fold.PinWindow)
		if next.At != math.MinInt64 && (next.Stored == 0 || next.At-next.Stored >= storedCheckpointEvery) {
			enc, err := encodeCheckpoint(next)
			if err != nil {
				return err
			}
			stored = append(stored, map[string]any{"job": k, "at": next.At, "ck": enc})
			next.Stored = next.At
		}
		// Written behind only when this fold started from the job's head checkpoint: otherwise the stored one may
		// no longer be a valid starting point (a late run, changed cuts or fields, no usable checkpoint). A head
		// loaded behind the job's stamp (another writer held, or crashed holding, newer unsaved state: rebuilt here
		// from the runs since it) is saved with the change too, so the stored state is current again.
		work := &jobWork{key: k, base: hits[k], seq: seqs[k], positions: positions[k], datasets: fences[k],
			save: ck == nil || ck.FromStore || behind[k],
			next: &jobCached{ck: next, runs: runsSince(runs[k], next.At), decls: decls[k],
				ev: fold.JobEvidenceRow(ev)}}
		if !work.save && w.jobs.dueWithChange(hits[k]) {
			work.save, work.due = true, true
		}
		works[k], evs[k] = work, work.next.ev
		if next.HasCols {
			colAggs, indAggs := fold.FoldColumns(prevCols, runs[k], hists), fold.FoldIndirect(prevInds, runs[k])
			for _, c := range fold.ColumnEdges(k, colAggs) {
				c.Props = fold.WithoutSharedEvidence(c.Props, fold.ColumnEvidenceOf(ev), fold.ColumnEvidenceProps)
				cols = append(cols, c)
			}
			inds = append(inds, fold.IndirectEdges(k, indAggs)...)
			outs := columnOutputs(colAggs, indAggs, runs[k])
			for _, o := range outs {
				colOuts = append(colOuts, map[string]any{"job": k, "out": o})
			}
			work.next.colOuts, work.next.colSigs = outs, columnSigs(next, runs[k], outs, sigs)
			if d := w.jobs.columnDigests(hits[k], outs, sigs); d != nil {
				knownCols[k] = d
			}
		}
	}
	known := map[string]map[string]any{}
	for k, e := range hits {
		known[k] = e.Value.edges
	}
	written, err := w.writeDatasetEdges(jobs, edges, known)
	if err != nil {
		return err
	}
	colsWritten, err := w.writeColumnEdges(colOuts, cols, knownCols)
	if err != nil {
		return err
	}
	if err := w.writeIndirectEdges(colOuts, inds); err != nil {
		return err
	}
	if len(stored) > 0 {
		if _, err := w.runAs("storeCheckpoints", `UNWIND $rows AS row
			MERGE (c:JobCheckpoint {key: row.job + '@' + toString(row.at)})
			SET c.jobKey = row.job, c.at = row.at, c.data = row.ck
			WITH row
			OPTIONAL MATCH (old:JobCheckpoint {jobKey: row.job}) WHERE old.at < row.at - $horizon
			DELETE old`, map[string]any{"rows": stored, "horizon": storedCheckpointHorizon}); err != nil {
			return err
		}
	}
	rows := make([]any, 0, len(jobs))
	through, due := 0, 0
	for _, k := range jobs {
		d := works[k]
		d.next.edges = written[k]
		if d.next.colOuts != nil {
			d.next.cols = colsWritten[k]
		}
		var last map[string]any
		if d.base != nil {
			last = d.base.Value.ev
		}
		row, err := w.jobs.jobRow(d, evs[k], last)
		if err != nil {
			return err
		}
		switch {
		case d.due:
			due++
		case d.save:
			through++
		}
		rows = append(rows, row)
	}
	if w.jobs != nil {
		w.jobs.f.saves.WithLabelValues("through").Add(float64(through))
		w.jobs.f.saves.WithLabelValues("due").Add(float64(due))
	}
	return w.writeFencedJobs("writeJobStates", rows)
}

// runsSince are the runs starting at or after t, by run key: what a cached job holds besides its checkpoint.
func runsSince(runs []fold.Run, t int64) map[string]fold.Run {
	out := map[string]fold.Run{}
	for _, r := range runs {
		if r.Start >= t {
			out[r.Key] = r
		}
	}
	return out
}

// lockJobs takes the jobs' write locks (in key order) and returns the checkpoints this batch may fold into: nil
// for a job that must be recomputed from all its runs. A job whose batch changed a run that starts before its
// head checkpoint folds from the latest stored checkpoint at or before that start (storedCheckpointBefore), so a
// late run costs the runs since then, not the job's whole history. q says which jobs fold in full and where each
// job's earliest changed run starts.
func (w *txWriter) lockJobs(jobs []string, q jobQueue) (map[string]*fold.Checkpoint, map[string]int64, map[string]bool, error) {
	ckpts, seqs, behind := map[string]*fold.Checkpoint{}, map[string]int64{}, map[string]bool{}
	if len(jobs) == 0 {
		return ckpts, seqs, behind, nil
	}
	out, err := w.run(`UNWIND $jobs AS k
		MATCH (j:Job {key: k})
		SET j.projLock = true REMOVE j.projLock
		RETURN k, j.edgeCkpt AS ck, coalesce(j.projSeq, 0) AS seq, coalesce(j.projSnap, 0) AS snap`,
		map[string]any{"jobs": toAny(jobs)})
	if err != nil {
		return nil, nil, nil, err
	}
	var late, after []any
	for _, row := range out {
		m := row.AsMap()
		k := asStr(m["k"])
		seqs[k] = asInt(m["seq"])
		ck := decodeCheckpoint(m["ck"])
		if ck != nil && asInt(m["snap"]) != seqs[k] {
			// The stored head was saved before the job's last write (projSnap < projSeq; absent on states saved
			// before the stamp): still a valid starting point (jobfold.go), folded with every run since it.
			behind[k] = true
			if w.jobs != nil {
				w.jobs.f.behind.Inc()
			}
		}
		if q.full[k] {
			late = append(late, map[string]any{"k": k, "t": int64(math.MinInt64)}) // stored ones are stale too
			continue
		}
		if changed, ok := q.since[k]; ok && ck != nil && changed < ck.At {
			late = append(late, map[string]any{"k": k, "t": changed})
			continue
		}
		if changed, ok := q.since[k]; ok {
			// The head checkpoint is written behind (jobfold.go), so stored copies may be newer than it: those
			// after the change lack the changed run.
			after = append(after, map[string]any{"k": k, "t": changed})
		}
		if ck == nil || !ck.Usable() {
			continue
		}
		ckpts[k] = ck
	}
	if len(after) > 0 {
		if _, err := w.runAs("lockJobs:stale-copies", `UNWIND $rows AS row
			MATCH (c:JobCheckpoint {jobKey: row.k}) WHERE c.at > row.t
			DETACH DELETE c`, map[string]any{"rows": after}); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(late) == 0 {
		return ckpts, seqs, behind, nil
	}
	// Stored checkpoints after the change are stale: the changed run was not in them.
	rows, err := w.run(`UNWIND $late AS row
		OPTIONAL MATCH (c:JobCheckpoint {jobKey: row.k}) WHERE c.at > row.t
		DETACH DELETE c
		WITH DISTINCT row
		OPTIONAL MATCH (c:JobCheckpoint {jobKey: row.k}) WHERE c.at <= row.t
		WITH row, c ORDER BY c.at DESC
		WITH row, head(collect(c.data)) AS data
		RETURN row.k AS k, data`, map[string]any{"late": late})
	if err != nil {
		return nil, nil, nil, err
	}
	for _, row := range rows {
		k, _ := row.Get("k")
		data, _ := row.Get("data")
		if ck := decodeCheckpoint(data); ck != nil && ck.Usable() && !q.full[asStr(k)] {
			ck.FromStore = true
			ckpts[asStr(k)] = ck
		}
	}
	return ckpts, seqs, behind, nil
}

// refoldChangedFields drops the checkpoints whose column fold resolved fields of a dataset whose field histories
// have changed since, and loads those jobs' runs (and their datasets) in full.
func (w *txWriter) refoldChangedFields(runs map[string][]fold.Run, ckpts map[string]*fold.Checkpoint,
	cuts map[string][]int64, hists map[string][]*fold.FieldHist, sigs map[string]string,
	hits map[string]*jobEntry, fences map[string]map[string]int64) error {
	var stale []string
	for k, ck := range ckpts {
		if ck.FieldsChanged(sigs) {
			stale = append(stale, k)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	sort.Strings(stale)
	for _, k := range stale {
		delete(ckpts, k)
	}
	more, err := w.loadJobRuns(stale, ckpts)
	if err != nil {
		return err
	}
	for _, k := range stale {
		runs[k] = more[k]
	}
	c, h, s, f, err := w.datasetsForFold(more, nil, hits)
	if err != nil {
		return err
	}
	for k, ds := range f {
		if fences[k] == nil {
			fences[k] = map[string]int64{}
		}
		maps.Copy(fences[k], ds)
	}
	maps.Copy(cuts, c)
	maps.Copy(hists, h)
	maps.Copy(sigs, s)
	return nil
}

func (w *txWriter) loadJobRuns(jobs []string, ckpts map[string]*fold.Checkpoint) (map[string][]fold.Run, error) {
	if len(jobs) == 0 {
		return map[string][]fold.Run{}, nil
	}
	rows := make([]any, 0, len(jobs))
	for _, k := range jobs {
		from := int64(math.MinInt64)
		if ck := ckpts[k]; ck != nil {
			from = ck.At
		}
		rows = append(rows, map[string]any{"k": k, "from": from})
	}
	out, err := w.run(`UNWIND $rows AS row
		MATCH (r:Run {jobKey: row.k}) WHERE r.firstEventAt >= row.from
		OPTIONAL MATCH (r)-[x:READ|WROTE]->(d:Dataset)
		WITH row.k AS k, r, collect(CASE WHEN x IS NULL THEN null ELSE {dir: type(x), ds: d.key, firstAt: x.firstAt,
			lastAt: coalesce(x.lastAt, r.ioLastAt), pub: x.publication, producer: x.producer,
			eventIds: coalesce(x.eventIds, r.ioEventIds), cols: x.columnLineage, ver: x.datasetVersion} END) AS io
		RETURN k, r.key AS rkey, coalesce(r.runId, r.key) AS id, r.state AS state, r.firstEventAt AS start, r.endedAt AS ended,
			r.lastEventTime AS last, r.processingType AS pt, r.jobVersion AS jv, io`, map[string]any{"rows": rows})
	if err != nil {
		return nil, err
	}
	m := map[string][]fold.Run{}
	for _, row := range out {
		g := func(k string) any { v, _ := row.Get(k); return v }
		r := fold.Run{Key: asStr(g("rkey")), ID: asStr(g("id")), State: asStr(g("state")), JobVersion: asStr(g("jv")), Start: asInt(g("start")),
			Ended: asInt(g("ended")), Last: asInt(g("last")), Streaming: asStr(g("pt")) == "STREAMING"}
		for _, x := range g("io").([]any) {
			io := decodeJobIO(x.(map[string]any))
			if io.Dir == graph.RelRead { // a READ's publication is its run's (ioRows)
				io.Pub = fold.RunPub(r.State, r.Streaming, "")
			}
			r.IO = append(r.IO, io)
		}
		sort.Slice(r.IO, func(i, j int) bool { return r.IO[i].Dir+r.IO[i].DS < r.IO[j].Dir+r.IO[j].DS })
		k := asStr(g("k"))
		m[k] = append(m[k], r)
	}
	for k := range m {
		sort.Slice(m[k], func(i, j int) bool { return m[k][i].ID < m[k][j].ID })
	}
	return m, nil
}

func decodeJobIO(x map[string]any) fold.IO {
	io := fold.IO{Dir: asStr(x["dir"]), DS: asStr(x["ds"]), FirstAt: asInt(x["firstAt"]), LastAt: asInt(x["lastAt"]),
		Pub: asStr(x["pub"]), Producer: asStr(x["producer"]), Cols: fold.DecodeCols(x["cols"]), Version: asStr(x["ver"])}
	if ids, ok := x["eventIds"].([]any); ok {
		for _, id := range ids {
			io.EventIDs = append(io.EventIDs, asStr(id))
		}
	}
	return io
}

func (w *txWriter) loadJobDecls(jobs []string) (map[string][]fold.Decl, error) {
	if len(jobs) == 0 {
		return map[string][]fold.Decl{}, nil
	}
	out, err := w.run(`UNWIND $jobs AS k
		MATCH (:Job {key: k})<-[:ABOUT_JOB]-(e:Event)
		RETURN k, collect(e.payload) AS payloads`, map[string]any{"jobs": toAny(jobs)})
	if err != nil {
		return nil, err
	}
	m := map[string][]fold.Decl{}
	for _, row := range out {
		k, _ := row.Get("k")
		ps, _ := row.Get("payloads")
		for _, p := range ps.([]any) {
			r, err := decodeRec(p)
			if err != nil {
				return nil, err
			}
			d := fold.Decl{ID: r.ID, Producer: r.Producer, T: r.Time, Inputs: okKeys(r.Inputs), Outputs: okKeys(r.Outputs)}
			m[k.(string)] = append(m[k.(string)], d)
		}
	}
	return m, nil
}

func okKeys(ds []*dsRec) map[string]bool {
	out := map[string]bool{}
	for _, d := range ds {
		if d.ID.ok() {
			out[d.ID.Key] = true
		}
	}
	return out
}

// columnOutputs are the outputs a job's COLUMN_FEEDS and INDIRECT_FEEDS are rewritten for: every output its
// column lineage ever named.
func columnOutputs(cols map[string]*fold.ColAgg, inds map[string]*fold.IndAgg, runs []fold.Run) []string {
	set := map[string]bool{}
	for _, a := range cols {
		set[a.M.Out] = true
	}
	for _, a := range inds {
		set[a.Out] = true
	}
	for _, r := range runs {
		for _, io := range r.IO {
			if io.Dir == graph.RelWrote && io.Cols != nil {
				set[io.DS] = true
			}
		}
	}
	return ordered.Keys(set)
}

// columnSigs is the fieldsSig, as of this fold, of every dataset a job's COLUMN_FEEDS can end on: those its
// checkpoint's column fold resolved fields in, those its runs' column lineage names, and its column outputs.
func columnSigs(ck *fold.Checkpoint, runs []fold.Run, outs []string, sigs map[string]string) map[string]string {
	out := map[string]string{}
	for ds := range ck.FieldSigs {
		out[ds] = sigs[ds]
	}
	for _, ds := range fold.ColumnDatasets(runs) {
		out[ds] = sigs[ds]
	}
	for _, ds := range outs {
		out[ds] = sigs[ds]
	}
	return out
}

// columnDigests are the COLUMN_FEEDS digests a held job last wrote, when they are what writeColumnEdges:read
// would return now (nil: read them back). They are when the job writes into the same column outputs and every
// dataset its edges could end on has the fieldsSig it had at that write: Field nodes are deleted or re-keyed only
// by a refold that changes the dataset's fieldsSig (deleteStaleFields), and only the job's own folds write
// COLUMN_FEEDS with its jobKey, each moving its stamp (a second writer's fold is refused by the fence, ADR 0045;
// a dataset it served moved by another writer, by ADR 0076's check).
func (t *jobTx) columnDigests(e *jobEntry, outs []string, sigs map[string]string) map[string]any {
	if t == nil || t.f.disabled || e == nil || e.Value.cols == nil || !slices.Equal(e.Value.colOuts, outs) {
		return nil
	}
	for ds, sig := range e.Value.colSigs {
		if now, ok := sigs[ds]; !ok || now != sig {
			return nil
		}
	}
	return e.Value.cols
}
