package project

import (
	"maps"
	"slices"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// What a job fold needs of its datasets (their cut times, fieldsSig and, for datasets in column lineage, their
// Field histories) is what the dataset fold state last wrote on their nodes. On a job fold-state hit it is served
// from that state instead of being read back (docs/adr/0076-job-folds-read-their-datasets-from-the-dataset-fold-state.md):
//
//   - a dataset this transaction wrote: the properties it wrote and the histories it folded (the transaction holds
//     the node's write lock, taken by the fenced dataset write);
//   - a dataset held in the dataset fold state (not stale): the properties and histories of its last write, at the
//     node's stamp (projSeq) of that write. The job's fenced write (writeFencedJobs) checks that every such
//     dataset's stamp is still that one: a dataset another writer moved since refuses the job's write, the
//     dataset's entry is marked stale (reloaded, its unsaved changes re-applied: dsfold.go), the job's entry is
//     dropped and the batch retried, which reads both from Neo4j. A served value is never one Neo4j no longer holds.
//
// Anything else (a job loaded from Neo4j in this attempt, a dataset not held or whose histories the state does not
// know) is read as before (readDatasets, the statement loadDatasetsOf).

// datasetsOfFold adds the datasets a job's fold reads to ds (cut times and fieldsSig) and colDs (field histories
// too): every dataset its runs and column lineage touch, and those its checkpoint depends on.
func datasetsOfFold(runs []fold.Run, ck *fold.Checkpoint, ds, colDs map[string]bool) {
	if ck != nil {
		for k := range ck.Subjects {
			ds[fold.ParseSubject(k).DS] = true
		}
		for k := range ck.FieldSigs {
			ds[k] = true
		}
	}
	for _, r := range runs {
		for _, io := range r.IO {
			ds[io.DS] = true
			for _, in := range io.ColInputs() { // the INPUT_TO its column lineage implies is cut like any other
				ds[in] = true
			}
		}
	}
	for _, k := range fold.ColumnDatasets(runs) {
		ds[k], colDs[k] = true, true
	}
}

// datasetsForFold returns the cut times, field histories and fieldsSig of every dataset the jobs' folds read,
// and, per job held in memory (hits), the stamps of the datasets served from the dataset fold state that its
// fenced write must find unchanged.
func (w *txWriter) datasetsForFold(byJob map[string][]fold.Run, ckpts map[string]*fold.Checkpoint,
	hits map[string]*jobEntry) (map[string][]int64, map[string][]*fold.FieldHist, map[string]string,
	map[string]map[string]int64, error) {
	jobs := map[string]bool{}
	for k := range byJob {
		jobs[k] = true
	}
	for k := range ckpts {
		jobs[k] = true
	}
	read, colDs := map[string]bool{}, map[string]bool{}
	hitDs := map[string]map[string]bool{}
	for _, k := range ordered.Keys(jobs) {
		if hits[k] == nil {
			datasetsOfFold(byJob[k], ckpts[k], read, colDs)
			continue
		}
		hitDs[k] = map[string]bool{}
		datasetsOfFold(byJob[k], ckpts[k], hitDs[k], colDs)
	}
	cuts, hists, sigs := map[string][]int64{}, map[string][]*fold.FieldHist{}, map[string]string{}
	served := map[string]int64{} // dataset -> the stamp it was served at (-1: written by this transaction)
	for _, ds := range hitDs {
		for k := range ds {
			if read[k] {
				continue
			}
			if _, ok := served[k]; ok {
				continue
			}
			if seq, ok := w.datasetInMemory(k, colDs[k], cuts, hists, sigs); ok {
				served[k] = seq
				continue
			}
			read[k] = true
		}
	}
	if len(read) > 0 {
		c, h, s, err := w.readDatasets(read, colDs)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		maps.Copy(cuts, c)
		maps.Copy(hists, h)
		maps.Copy(sigs, s)
	}
	fences := map[string]map[string]int64{}
	for job, ds := range hitDs {
		for k := range ds {
			if seq, ok := served[k]; ok && seq >= 0 {
				if fences[job] == nil {
					fences[job] = map[string]int64{}
				}
				fences[job][k] = seq
			}
		}
	}
	return cuts, hists, sigs, fences, nil
}

// datasetInMemory serves what the dataset fold state knows of dataset k's node into cuts, hists (withHists) and
// sigs, as loadDatasetsOf would read it, and returns the stamp to fence it on (-1: this transaction wrote it).
// ok is false when the state does not hold it (or not its histories): it is read from Neo4j.
func (w *txWriter) datasetInMemory(k string, withHists bool, cuts map[string][]int64,
	hists map[string][]*fold.FieldHist, sigs map[string]string) (int64, bool) {
	t := w.fold
	if t == nil || t.a.f.disabled {
		return 0, false
	}
	var last map[string]any
	var hs []fold.FieldHist
	var known bool
	var seq int64
	if d := t.works[k]; d != nil {
		if !d.written {
			return 0, false // read in this attempt without a write: its snapshot may be older than its node
		}
		last, hs, known, seq = d.wrote, d.hists, d.histsKnown, -1
		if !known && d.base.Value != nil && d.base.Value.histsKnown {
			hs, known = d.base.Value.hists, true
		}
	} else {
		e := t.a.f.cache.Peek(k)
		if e == nil || e.Value.stale || e.Value.last == nil {
			return 0, false
		}
		last, hs, known, seq = e.Value.last, e.Value.hists, e.Value.histsKnown, e.Seq
	}
	if last == nil || (withHists && !known) {
		return 0, false
	}
	if list, ok := last["cuts"].([]any); ok {
		for _, c := range list {
			cuts[k] = append(cuts[k], asInt(c))
		}
	}
	sigs[k] = asStr(last["fieldsSig"])
	if withHists {
		for i := range hs { // copies: the fold never shares a served history with the state
			h := &hs[i]
			hists[k] = append(hists[k], &fold.FieldHist{Path: h.Path, From: h.From, To: h.To, Names: slices.Clone(h.Names)})
		}
	}
	return seq, true
}

// storedHists are a dataset's field histories as its Field nodes hold them for the job folds (path, interval,
// names), copied out of the fold's working values.
func storedHists(hs []*fold.FieldHist) []fold.FieldHist {
	out := make([]fold.FieldHist, len(hs))
	for i, h := range hs {
		out[i] = fold.FieldHist{Path: h.Path, From: h.From, To: h.To, Names: slices.Clone(h.Names)}
	}
	return out
}

// readDatasets reads the datasets' cut times and fieldsSig, and the field histories of those in colDs (the
// statement is labelled loadDatasetsOf, its name before the fold state served it).
func (w *txWriter) readDatasets(ds, colDs map[string]bool) (map[string][]int64, map[string][]*fold.FieldHist,
	map[string]string, error) {
	out, err := w.runAs("loadDatasetsOf", `UNWIND $ds AS k
		MATCH (d:Dataset {key: k})
		OPTIONAL MATCH (d)-[:HAS_FIELD]->(f:Field) WHERE k IN $colDs
		RETURN k, d.cuts AS cuts, d.fieldsSig AS sig, collect({path: f.path, from: f.validFrom, to: f.validTo, ps: f.paths, pf: f.pathFroms, fid: f.fieldId}) AS fields`,
		map[string]any{"ds": toAny(ordered.Keys(ds)), "colDs": toAny(ordered.Keys(colDs))})
	if err != nil {
		return nil, nil, nil, err
	}
	cuts, hists, sigs := map[string][]int64{}, map[string][]*fold.FieldHist{}, map[string]string{}
	for _, row := range out {
		k, _ := row.Get("k")
		c, _ := row.Get("cuts")
		if list, ok := c.([]any); ok {
			for _, t := range list {
				cuts[k.(string)] = append(cuts[k.(string)], asInt(t))
			}
		}
		sig, _ := row.Get("sig")
		sigs[k.(string)] = asStr(sig)
		fs, _ := row.Get("fields")
		for _, f := range fs.([]any) {
			m := f.(map[string]any)
			if m["path"] != nil {
				hists[k.(string)] = append(hists[k.(string)], &fold.FieldHist{Path: asStr(m["path"]), From: asInt(m["from"]), To: asInt(m["to"]),
					Names: namesFrom(m["ps"], m["pf"]), FieldID: asStr(m["fid"])})
			}
		}
	}
	return cuts, hists, sigs, nil
}

// noteHists records the work's field histories after deriveDataset's change: those it folded, else (the fields
// repeat the schema in force) the base entry's, folded afresh once when the entry does not know them (a state
// just loaded).
func (d *dsWork) noteHists(unchanged bool, folded []*fold.FieldHist, st *dsState) {
	switch {
	case !unchanged:
		d.hists = storedHists(folded)
	case d.base.Value != nil && d.base.Value.histsKnown && !d.loaded:
		d.hists = d.base.Value.hists
	default:
		d.hists = storedHists(st.FieldHistories())
	}
	d.histsKnown = true
}
