package project

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// dsWrites collects the rows one batch writes for its datasets, so each kind of write is one UNWIND query.
type dsWrites struct {
	props, versions, fields, decl []any
	fieldDatasets, declDatasets   []any
	fieldKeep, declKeep           []any
	queueJobsOf                   []any
	chunks                        []any                 // sealed DatasetLogChunk rows
	declLogs                      map[string][]fold.Obs // datasets whose declared column lineage is recomputed
	jobs                          jobQueue              // the jobs whose edges the changes make stale
}

// projectDatasets folds the batch's observations into each affected dataset's state (under the node's write
// lock) and rewrites what derives from it: metadata, droppedAt and cut times, Field histories, declared
// (DECLARED_FEEDS) lineage and dataset versions. It returns the jobs whose edges depend on changed cuts or fields.
//
// The states come from the projector's memory (dsfold.go), else from their snapshot; events replayed after a
// crash (replayed) fold into the datasets whose snapshot does not hold them.
func (w *txWriter) projectDatasets(recs, replayed []*rec, refold []string) (jobQueue, error) {
	changes, err := w.datasetChanges(recs, replayed, refold)
	if err != nil {
		return jobQueue{}, err
	}
	keys := make([]string, 0, len(changes))
	works, states := map[string]*dsWork{}, map[string]*dsState{}
	for k := range changes {
		keys = append(keys, k)
		works[k] = w.fold.works[k]
		states[k] = works[k].st
	}
	sort.Strings(keys)
	if err := w.restoreLate(works, changes); err != nil {
		return jobQueue{}, err
	}
	out := dsWrites{declLogs: map[string][]fold.Obs{}}
	for _, k := range keys {
		if err := w.deriveDataset(&out, works[k], changes[k]); err != nil {
			return jobQueue{}, err
		}
	}
	if err := w.queueSchemaDependents(&out, keys, changes); err != nil { // ADR 0065 (schemarefs.go)
		return jobQueue{}, err
	}
	if err := w.queueColumnDependents(&out, states); err != nil {
		return jobQueue{}, err
	}
	if err := w.writeDatasets(&out); err != nil {
		return jobQueue{}, err
	}
	return out.jobs, w.projectDeclaredColumns(out.declLogs)
}

// queueColumnDependents finds the column lineage resolved into the field histories of the datasets whose fields
// change in this batch, before the stale Field nodes (and their COLUMN_FEEDS) go: the jobs whose COLUMN_FEEDS
// touch those fields are queued (their checkpoint's FieldSigs then no longer match, so their column lineage is
// folded again from all runs against the new histories), and the datasets whose declared COLUMN_FEEDS touch them
// have their declared column lineage recomputed. Without this an earlier observation arriving later (a field
// history that now starts earlier, so has another key) would orphan the edges of jobs not in the batch (issue 14
// item 0). Every column-lineage listing mentions its fields (addMentions), so a listing always resolves to some
// history and has an edge on it: the edges name every dependent.
func (w *txWriter) queueColumnDependents(out *dsWrites, states map[string]*dsState) error {
	if len(out.fieldDatasets) == 0 {
		return nil
	}
	rows, err := w.runAs("queueColumnDependents", `UNWIND $ds AS k
		MATCH (:Dataset {key: k})-[:HAS_FIELD]->(:Field)-[c:COLUMN_FEEDS]-(:Field)
		WITH DISTINCT c
		RETURN DISTINCT c.jobKey AS job, CASE WHEN c.jobKey = '' THEN endNode(c).datasetKey ELSE '' END AS decl`,
		map[string]any{"ds": out.fieldDatasets})
	if err != nil {
		return err
	}
	var load []string
	for _, r := range rows {
		job, _ := r.Get("job")
		decl, _ := r.Get("decl")
		switch k := asStr(decl); {
		case asStr(job) != "":
			out.jobs.add(asStr(job))
		case k == "" || out.declLogs[k] != nil:
		case states[k] != nil:
			out.declLogs[k] = states[k].Log
		default:
			load = append(load, k)
		}
	}
	if len(load) == 0 {
		return nil
	}
	sort.Strings(load)
	more, err := w.datasetStates(load) // read only: not written, so not fenced
	if err != nil {
		return err
	}
	for k, st := range more {
		out.declLogs[k] = st.Log
	}
	return nil
}

// deriveDataset folds the change into the dataset's working state d and adds what derives from it to out; it
// marks d to be saved when the log sealed a chunk.
func (w *txWriter) deriveDataset(out *dsWrites, d *dsWork, c *dsChange) error {
	key, st := d.key, d.st
	oldCuts, _ := fold.LifecycleTimes(st.Log)
	oldFields := st.FieldsSig
	// The common case (the schema in force, reported again later) cannot change the field histories: skip the
	// fold and keep the digest.
	unchanged := oldFields != "" && st.RepeatsLatestSchema(c.obs)
	if oldFields == "" {
		oldFields = fieldsDigest(key, st.FieldHistories())
	}
	st.merge(c)
	cuts, dropped := fold.LifecycleTimes(st.Log)
	var hists []*fold.FieldHist
	fieldsChanged := false
	if !unchanged {
		hists = st.FieldHistories()
		st.FieldsSig = fieldsDigest(key, hists)
		fieldsChanged = st.FieldsSig != oldFields
	}
	if ch := st.seal(); ch != nil {
		d.save = true // the snapshot names the chunks: saved with them
		data, err := encodeChunk(ch)
		if err != nil {
			return err
		}
		out.chunks = append(out.chunks, map[string]any{"key": chunkKey(key, ch.Seq), "ds": key, "seq": ch.Seq,
			"from": ch.From, "to": ch.To, "data": data})
	}
	d.noteHists(unchanged, hists, st)
	row, err := w.fold.datasetRow(d, datasetProps(st, cuts, dropped), w.fold.a.f.now())
	if err != nil {
		return err
	}
	out.props = append(out.props, row)
	w.touch(key)
	for _, v := range c.versions {
		out.versions = append(out.versions, map[string]any{"ds": key, "key": graph.DatasetVersionKey(key, v.Version),
			"version": v.Version, "t": v.T, "lc": v.Lifecycle, "snap": snapshotProps(v.Snapshot)})
	}
	if fieldsChanged {
		out.fieldDatasets = append(out.fieldDatasets, key)
		for _, h := range hists {
			fk := h.Key(key)
			out.fieldKeep = append(out.fieldKeep, fk)
			out.fields = append(out.fields, map[string]any{"ds": key, "key": fk, "props": map[string]any{
				"datasetKey": key, "path": h.Path, "type": h.Type, "description": h.Description, "fieldId": h.FieldID,
				"validFrom": h.From, "validTo": h.To, "observedOnRead": h.Read, "normVersion": NormVersion,
				"paths": namesOf(h), "pathFroms": nameFromsOf(h)}})
			w.touch(fk)
		}
	}
	if hasKind(c.obs, fold.ObsDecl) {
		out.declDatasets = append(out.declDatasets, key)
		out.declLogs[key] = st.Log
		for _, e := range declaredFeeds(st.Log) {
			out.decl = append(out.decl, map[string]any{"ds": key, "up": e.DS, "props": versioned(e.Props)})
			out.declKeep = append(out.declKeep, e.DS+">"+key)
			w.touch(e.DS)
		}
	}
	// Only cuts change a job's dataset-level edges. Field changes reach the column-lineage fold through the
	// fieldsSig its checkpoint records (jobCheckpoint.FieldSigs), and runs after the checkpoint always resolve
	// fields afresh, so they need not refold every job that touches the dataset.
	if !slices.Equal(cuts, oldCuts) {
		out.queueJobsOf = append(out.queueJobsOf, key)
	}
	return nil
}

// fieldsDigest identifies a dataset's field histories: equal digests, equal Field nodes.
func fieldsDigest(key string, hists []*fold.FieldHist) string {
	sum := sha256.New()
	for _, h := range hists {
		fmt.Fprintf(sum, "%s|%d|%d|%s|%s|%s|%t\n", h.Key(key), h.From, h.To, h.Type, h.Description, h.FieldID, h.Read)
		for _, n := range h.Names { // only renamed fields add a line: digests of fields never renamed are version 4's
			fmt.Fprintf(sum, " %s@%d\n", n.P, n.F)
		}
	}
	return hex.EncodeToString(sum.Sum(nil))
}

func hasKind(obs []fold.Obs, kind string) bool {
	for _, o := range obs {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// datasetProps are the properties derived from a dataset's state (the snapshot is written apart: dsfold.go).
func datasetProps(st *dsState, cuts []int64, dropped *int64) map[string]any {
	props := map[string]any{"cuts": toAny(cuts), "facets": st.facetsJSON(),
		"updatedAt": st.lastUpdate(), "normVersion": NormVersion, "droppedAt": nil, "fieldsSig": st.FieldsSig}
	if dropped != nil {
		props["droppedAt"] = *dropped
	}
	if v, ok := st.Meta["description"]; ok {
		var s string
		_ = json.Unmarshal(v.V, &s)
		props["description"] = s
	}
	if v, ok := st.Meta["owners"]; ok {
		props["owners"] = string(v.V)
	}
	if v, ok := st.Meta["tags"]; ok {
		props["tags"] = toAny(tagStrings(v.V))
	}
	tagProps(st, props)
	blockProps(st, props)
	if len(st.IceSchemas) > 0 {
		props["icebergSchemas"] = st.IceSchemas.encode()
	}
	return props
}

// declaredFeeds derives the DECLARED_FEEDS into a dataset from its lineage-facet observations: each facet
// states the full upstream set at its time; a later facet that omits an upstream withdraws it.
func declaredFeeds(log []fold.Obs) []fold.Edge {
	var decls []fold.Decl
	for _, o := range log {
		if o.Kind != fold.ObsDecl {
			continue
		}
		d := fold.Decl{ID: o.Event, Producer: o.Prod, T: o.T, Inputs: map[string]bool{}}
		for _, k := range o.Keys {
			d.Inputs[k] = true
		}
		decls = append(decls, d)
	}
	edges := fold.DeclaredEdges(decls, "")
	for _, e := range edges {
		e.Props["derivation"] = "lineageFacet"
	}
	return edges
}

// restoreLate puts back into the log of each working state the sealed chunks a late observation falls into
// (dslog.go), marks it to be saved, and deletes them: the state is sealed again as it grows.
func (w *txWriter) restoreLate(works map[string]*dsWork, changes map[string]*dsChange) error {
	var rows []any
	for k, d := range works {
		if t, late := d.st.LateFor(changes[k].obs); late {
			rows = append(rows, map[string]any{"k": k, "t": t, "seq": d.st.Base.Seq})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if w.restores != nil {
		w.restores.Add(float64(len(rows)))
	}
	out, err := w.run(`UNWIND $rows AS row
		MATCH (c:DatasetLogChunk {datasetKey: row.k}) WHERE c.to >= row.t AND c.seq <= row.seq
		RETURN row.k AS k, c.key AS key, c.data AS data`, map[string]any{"rows": rows})
	if err != nil {
		return err
	}
	chunks := map[string][]fold.LogChunk{}
	var del []any
	for _, row := range out {
		k, _ := row.Get("k")
		key, _ := row.Get("key")
		data, _ := row.Get("data")
		c, err := decodeChunk(data)
		if err != nil {
			return fmt.Errorf("%s: %w", asStr(key), err)
		}
		chunks[asStr(k)] = append(chunks[asStr(k)], c)
		del = append(del, key)
	}
	for k, cs := range chunks {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Seq < cs[j].Seq })
		works[k].st.Restore(cs)
		works[k].save = true // the restored chunks are deleted: the snapshot must hold them now
	}
	_, err = w.run(`UNWIND $keys AS k MATCH (c:DatasetLogChunk {key: k}) DELETE c`, map[string]any{"keys": del})
	return err
}

// writeDatasets runs the batched dataset writes.
func (w *txWriter) writeDatasets(out *dsWrites) error {
	queries := []struct {
		name  string
		rows  []any
		query string
	}{
		{"writeDatasets:chunks", out.chunks, `UNWIND $rows AS row
			MERGE (c:DatasetLogChunk {key: row.key})
			SET c.datasetKey = row.ds, c.seq = row.seq, c.from = row.from, c.to = row.to, c.data = row.data`},
		{"writeDatasets:versions", out.versions, `UNWIND $rows AS row
			MATCH (d:Dataset {key: row.ds})
			MERGE (v:DatasetVersion {key: row.key})
				ON CREATE SET v.datasetKey = row.ds, v.version = row.version, v.firstSeenAt = row.t, v.normVersion = $nv
			SET v.firstSeenAt = CASE WHEN row.t < v.firstSeenAt THEN row.t ELSE v.firstSeenAt END
			FOREACH (_ IN CASE WHEN row.lc <> '' THEN [1] ELSE [] END | SET v.lifecycle = row.lc)
			FOREACH (_ IN CASE WHEN row.snap IS NOT NULL THEN [1] ELSE [] END | SET v += row.snap)
			MERGE (v)-[:VERSION_OF]->(d)`},
		{"writeDatasets:fields", out.fields, `UNWIND $rows AS row
			MATCH (d:Dataset {key: row.ds})
			MERGE (f:Field {key: row.key})
			SET f += row.props
			MERGE (d)-[:HAS_FIELD]->(f)`},
		{"writeDatasets:declared", out.decl, `UNWIND $rows AS row
			MATCH (d:Dataset {key: row.ds}), (u:Dataset {key: row.up})
			MERGE (u)-[e:DECLARED_FEEDS]->(d)
			SET e += row.props`},
	}
	if err := w.writeFencedDatasets(out.props); err != nil {
		return err
	}
	for _, q := range queries {
		if len(q.rows) == 0 {
			continue
		}
		if _, err := w.runAs(q.name, q.query, map[string]any{"rows": q.rows, "nv": NormVersion}); err != nil {
			return err
		}
	}
	if err := w.deleteStaleFields(out); err != nil {
		return err
	}
	if len(out.declDatasets) > 0 {
		if _, err := w.run(`UNWIND $ds AS k
			MATCH (u:Dataset)-[e:DECLARED_FEEDS]->(:Dataset {key: k})
			WHERE NOT (u.key + '>' + k) IN $keep DELETE e`,
			map[string]any{"ds": out.declDatasets, "keep": out.declKeep}); err != nil {
			return err
		}
	}
	return w.queueJobsOf(out.queueJobsOf, &out.jobs)
}

// deleteStaleFields removes Field nodes no longer derived (a history split or merged by a late event) with
// their column edges; the jobs of those datasets are recomputed.
func (w *txWriter) deleteStaleFields(out *dsWrites) error {
	if len(out.fieldDatasets) == 0 {
		return nil
	}
	keep := out.fieldKeep
	if keep == nil {
		keep = []any{}
	}
	rows, err := w.run(`UNWIND $ds AS k
		MATCH (:Dataset {key: k})-[:HAS_FIELD]->(f:Field)
		WHERE NOT f.key IN $keep
		WITH f, f.key AS fk DETACH DELETE f RETURN fk`, map[string]any{"ds": out.fieldDatasets, "keep": keep})
	for _, r := range rows {
		k, _ := r.Get("fk")
		w.touch(asStr(k))
	}
	return err
}

// queueJobsOf queues the jobs linked to the datasets, to be folded from all their runs.
func (w *txWriter) queueJobsOf(keys []any, q *jobQueue) error {
	if len(keys) == 0 {
		return nil
	}
	out, err := w.run(`UNWIND $keys AS k
		MATCH (d:Dataset {key: k})
		CALL (d) {
			MATCH (d)-[:INPUT_TO]->(j:Job) RETURN j
			UNION
			MATCH (d)<-[:OUTPUT_TO]-(j:Job) RETURN j
		}
		RETURN DISTINCT j.key AS k`, map[string]any{"keys": keys})
	if err != nil {
		return err
	}
	for _, r := range out {
		k, _ := r.Get("k")
		q.addFull(asStr(k))
	}
	return nil
}

// snapshotProps are the DatasetVersion properties of an Iceberg snapshot (ADR 0041; nil for other versions):
// parent snapshot id (text), commit time, sequence number, operation and the summary as JSON.
func snapshotProps(s *olevent.IcebergSnapshot) map[string]any {
	if s == nil {
		return nil
	}
	summary, _ := json.Marshal(s.Summary) // a map of strings always encodes
	props := map[string]any{"parentVersion": s.Parent, "committedAt": s.TimestampMs, "sequenceNumber": s.SequenceNumber,
		"operation": s.Operation, "summary": string(summary)}
	if s.SchemaID != "" { // never cleared: a version 6 event of the same snapshot names no schema id
		props["schemaId"] = s.SchemaID
	}
	return props
}

// namesOf and nameFromsOf are a renamed field's Field.paths and Field.pathFroms (its names and the times they took
// effect, ADR 0041); an untyped nil (no property; a typed nil slice would store an empty list) for a field never
// renamed.
func namesOf(h *fold.FieldHist) any {
	if len(h.Names) == 0 {
		return nil
	}
	out := make([]any, len(h.Names))
	for i, n := range h.Names {
		out[i] = n.P
	}
	return out
}

func nameFromsOf(h *fold.FieldHist) any {
	if len(h.Names) == 0 {
		return nil
	}
	out := make([]any, len(h.Names))
	for i, n := range h.Names {
		out[i] = n.F
	}
	return out
}

// namesFrom reads a Field's paths and pathFroms back into a history's Names.
func namesFrom(paths, froms any) []fold.FieldName {
	ps, _ := paths.([]any)
	fs, _ := froms.([]any)
	if len(ps) == 0 || len(ps) != len(fs) {
		return nil
	}
	out := make([]fold.FieldName, len(ps))
	for i := range ps {
		out[i] = fold.FieldName{P: asStr(ps[i]), F: asInt(fs[i])}
	}
	return out
}
