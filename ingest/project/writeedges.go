package project

import (
	"maps"
	"strings"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// writeDatasetEdges makes the jobs' INPUT_TO / OUTPUT_TO relationships exactly the derived ones, writing only
// those whose derived properties changed since the projector last wrote them (projHash) and deleting those no
// longer derived. Every derived edge's dataset is touched: its evidence may have changed through the job. known
// holds, for jobs whose fold state is in memory, the digests it last wrote ("DIR|job|ds|kind"); the others' are
// read. It returns, per job, the digests of its edges now.
func (w *txWriter) writeDatasetEdges(jobs []string, edges []fold.Edge, known map[string]map[string]any) (map[string]map[string]any, error) {
	var read []string
	for _, k := range jobs {
		if known[k] == nil {
			read = append(read, k)
		}
	}
	written := make(map[string]map[string]any, len(jobs))
	for _, k := range jobs {
		written[k] = map[string]any{}
	}
	for _, dir := range []string{graph.RelInputTo, graph.RelOutputTo} {
		pattern := "(d)-[e:INPUT_TO {kind: row.kind}]->(j)"
		existing := "(d:Dataset)-[e:INPUT_TO]->(j:Job {key: k})"
		if dir == graph.RelOutputTo {
			pattern = "(j)-[e:OUTPUT_TO {kind: row.kind}]->(d)"
			existing = "(j:Job {key: k})-[e:OUTPUT_TO]->(d:Dataset)"
		}
		stored := map[string]any{}
		if len(read) > 0 {
			out, err := w.runAs("writeDatasetEdges:read", `UNWIND $jobs AS k
				MATCH `+existing+`
				RETURN k + '|' + d.key + '|' + e.kind AS id, e.`+projHashProp+` AS h`, map[string]any{"jobs": toAny(read)})
			if err != nil {
				return nil, err
			}
			for _, r := range out {
				id, _ := r.Get("id")
				h, _ := r.Get("h")
				stored[asStr(id)] = h
			}
		}
		for _, m := range known {
			for id, h := range m {
				if d, rest, _ := strings.Cut(id, "|"); d == dir {
					stored[rest] = h
				}
			}
		}
		var rows []any
		for _, e := range edges {
			if e.Dir != dir {
				continue
			}
			w.touch(e.DS)
			id := e.Job + "|" + e.DS + "|" + e.Kind
			h, was := stored[id]
			delete(stored, id)
			nh := propsHash(versioned(e.Props))
			written[e.Job][dir+"|"+id] = nh
			if !was || h != nh {
				rows = append(rows, map[string]any{"job": e.Job, "ds": e.DS, "kind": e.Kind, "props": e.Props, "h": nh})
			}
		}
		if len(rows) > 0 {
			if _, err := w.runAs("writeDatasetEdges:merge", `UNWIND $rows AS row
				MATCH (j:Job {key: row.job}), (d:Dataset {key: row.ds})
				MERGE `+pattern+`
				SET e += row.props, e.`+projHashProp+` = row.h`, map[string]any{"rows": rows}); err != nil {
				return nil, err
			}
		}
		if len(stored) == 0 {
			continue
		}
		var stale []any
		for _, id := range ordered.Keys(stored) {
			parts := strings.SplitN(id, "|", 3)
			stale = append(stale, map[string]any{"job": parts[0], "ds": parts[1], "kind": parts[2]})
			w.touch(parts[1])
		}
		if _, err := w.runAs("writeDatasetEdges:stale", `UNWIND $rows AS row
			MATCH `+strings.Replace(existing, "{key: k}", "{key: row.job}", 1)+`
			WHERE d.key = row.ds AND e.kind = row.kind
			DELETE e`, map[string]any{"rows": stale}); err != nil {
			return nil, err
		}
	}
	w.touch(jobs...)
	return written, nil
}

// writeColumnEdges makes the jobs' COLUMN_FEEDS into the given (job, output) pairs exactly the derived ones,
// writing only those whose derived properties changed (projHash). known are, per job, the digests it last wrote
// (columnDigests): those jobs' edges are not read back. It returns, per job of outputs, the digests stored after
// the write: exactly what writeColumnEdges:read would return next (the unchanged edges, the merged ones whose
// Fields exist, not the deleted).
func (w *txWriter) writeColumnEdges(outputs []any, edges []fold.ColEdge, known map[string]map[string]any) (map[string]map[string]any, error) {
	stored := map[string]any{}
	written := map[string]map[string]any{}
	var read []any
	for _, o := range outputs {
		job := asStr(o.(map[string]any)["job"])
		if written[job] == nil {
			written[job] = map[string]any{}
			maps.Copy(stored, known[job])
		}
		if known[job] == nil {
			read = append(read, o)
		}
	}
	if len(read) > 0 {
		out, err := w.runAs("writeColumnEdges:read", `UNWIND $outs AS o
			MATCH (:Dataset {key: o.out})-[:HAS_FIELD]->(b:Field)<-[c:COLUMN_FEEDS {jobKey: o.job}]-(a:Field)
			RETURN o.job + '|' + a.key + '>' + b.key AS id, c.`+projHashProp+` AS h`, map[string]any{"outs": read})
		if err != nil {
			return nil, err
		}
		for _, r := range out {
			id, _ := r.Get("id")
			h, _ := r.Get("h")
			stored[asStr(id)] = h
		}
	}
	rows := make([]any, 0, len(edges))
	for _, e := range edges {
		job := asStr(e.Props["jobKey"])
		w.touch(e.From, e.To)
		id := job + "|" + e.From + ">" + e.To
		h, was := stored[id]
		delete(stored, id)
		nh := propsHash(versioned(e.Props))
		if was && h == nh {
			if written[job] != nil {
				written[job][id] = h
			}
			continue
		}
		rows = append(rows, map[string]any{"id": id, "from": e.From, "to": e.To, "job": job, "props": e.Props, "h": nh})
	}
	if len(rows) > 0 {
		out, err := w.runAs("writeColumnEdges:merge", `UNWIND $rows AS row
			MATCH (a:Field {key: row.from}), (b:Field {key: row.to})
			MERGE (a)-[c:COLUMN_FEEDS {jobKey: row.job}]->(b)
			SET c += row.props, c.`+projHashProp+` = row.h
			RETURN row.id AS id, row.job AS job, row.h AS h`, map[string]any{"rows": rows})
		if err != nil {
			return nil, err
		}
		for _, r := range out {
			id, _ := r.Get("id")
			job, _ := r.Get("job")
			h, _ := r.Get("h")
			if m := written[asStr(job)]; m != nil {
				m[asStr(id)] = h
			}
		}
	}
	if len(stored) == 0 {
		return written, nil
	}
	stale := make([]any, 0, len(stored))
	for _, id := range ordered.Keys(stored) {
		job, rest, _ := strings.Cut(id, "|")
		from, to, _ := strings.Cut(rest, ">")
		stale = append(stale, map[string]any{"job": job, "from": from, "to": to})
	}
	if _, err := w.runAs("writeColumnEdges:stale", `UNWIND $rows AS row
		MATCH (a:Field {key: row.from})-[c:COLUMN_FEEDS {jobKey: row.job}]->(b:Field {key: row.to})
		DELETE c`, map[string]any{"rows": stale}); err != nil {
		return nil, err
	}
	return written, nil
}

// writeIndirectEdges makes the jobs' INDIRECT_FEEDS into the given (job, output) pairs exactly the derived ones.
func (w *txWriter) writeIndirectEdges(outputs []any, edges []fold.IndirectEdge) error {
	rows := make([]any, 0, len(edges))
	keep := make([]any, 0, len(edges))
	for _, e := range edges {
		job := asStr(e.Props["jobKey"])
		rows = append(rows, map[string]any{"from": e.From, "to": e.To, "job": job, "props": versioned(e.Props)})
		keep = append(keep, job+"|"+e.From+">"+e.To)
	}
	if len(rows) > 0 {
		if _, err := w.run(`UNWIND $rows AS row
			MATCH (a:Dataset {key: row.from}), (b:Dataset {key: row.to})
			MERGE (a)-[x:INDIRECT_FEEDS {jobKey: row.job, outputKey: row.to}]->(b)
			SET x += row.props`, map[string]any{"rows": rows}); err != nil {
			return err
		}
	}
	if len(outputs) == 0 {
		return nil
	}
	_, err := w.run(`UNWIND $outs AS o
		MATCH (a:Dataset)-[x:INDIRECT_FEEDS {jobKey: o.job}]->(b:Dataset {key: o.out})
		WHERE NOT (o.job + '|' + a.key + '>' + b.key) IN $keep
		DELETE x`, map[string]any{"outs": outputs, "keep": keep})
	return err
}

// versioned stamps a derived relationship's properties (ingest/fold derives them) with the projection version
// that writes them.
func versioned(props map[string]any) map[string]any {
	props["normVersion"] = NormVersion
	return props
}
