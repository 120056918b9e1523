package project

import (
	"github.com/headwater-data/headwater/graph"
)

// writeDatasetEdges makes the jobs' INPUT_TO / OUTPUT_TO relationships exactly the derived ones.
func (w *txWriter) writeDatasetEdges(jobs []string, edges []edge) error {
	for _, dir := range []string{graph.RelInputTo, graph.RelOutputTo} {
		var rows []any
		keep := []any{}
		for _, e := range edges {
			if e.Dir == dir {
				rows = append(rows, map[string]any{"job": e.Job, "ds": e.DS, "kind": e.Kind, "props": e.Props})
				keep = append(keep, e.Job+"|"+e.DS+"|"+e.Kind)
				w.touch(e.DS)
			}
		}
		pattern := "(d)-[e:INPUT_TO {kind: row.kind}]->(j)"
		existing := "(d:Dataset)-[e:INPUT_TO]->(j:Job {key: k})"
		if dir == graph.RelOutputTo {
			pattern = "(j)-[e:OUTPUT_TO {kind: row.kind}]->(d)"
			existing = "(j:Job {key: k})-[e:OUTPUT_TO]->(d:Dataset)"
		}
		if len(rows) > 0 {
			if _, err := w.runAs("writeDatasetEdges:merge", `UNWIND $rows AS row
				MATCH (j:Job {key: row.job}), (d:Dataset {key: row.ds})
				MERGE `+pattern+`
				SET e += row.props`, map[string]any{"rows": rows}); err != nil {
				return err
			}
		}
		out, err := w.runAs("writeDatasetEdges:stale", `UNWIND $jobs AS k
			MATCH `+existing+`
			WHERE NOT (k + '|' + d.key + '|' + e.kind) IN $keep
			DELETE e RETURN d.key AS k`, map[string]any{"jobs": toAny(jobs), "keep": keep})
		if err != nil {
			return err
		}
		for _, r := range out {
			k, _ := r.Get("k")
			w.touch(asStr(k))
		}
	}
	w.touch(jobs...)
	return nil
}

// writeColumnEdges makes the jobs' COLUMN_FEEDS into the given (job, output) pairs exactly the derived ones.
func (w *txWriter) writeColumnEdges(outputs []any, edges []colEdge) error {
	rows := make([]any, 0, len(edges))
	keep := make([]any, 0, len(edges))
	for _, e := range edges {
		job := asStr(e.Props["jobKey"])
		rows = append(rows, map[string]any{"from": e.From, "to": e.To, "job": job, "props": e.Props})
		keep = append(keep, job+"|"+e.From+">"+e.To)
		w.touch(e.From, e.To)
	}
	if len(rows) > 0 {
		if _, err := w.runAs("writeColumnEdges:merge", `UNWIND $rows AS row
			MATCH (a:Field {key: row.from}), (b:Field {key: row.to})
			MERGE (a)-[c:COLUMN_FEEDS {jobKey: row.job}]->(b)
			SET c += row.props`, map[string]any{"rows": rows}); err != nil {
			return err
		}
	}
	if len(outputs) == 0 {
		return nil
	}
	_, err := w.runAs("writeColumnEdges:stale", `UNWIND $outs AS o
		MATCH (:Dataset {key: o.out})-[:HAS_FIELD]->(b:Field)<-[c:COLUMN_FEEDS {jobKey: o.job}]-(a:Field)
		WHERE NOT (o.job + '|' + a.key + '>' + b.key) IN $keep
		DELETE c`, map[string]any{"outs": outputs, "keep": keep})
	return err
}

// writeIndirectEdges makes the jobs' INDIRECT_FEEDS into the given (job, output) pairs exactly the derived ones.
func (w *txWriter) writeIndirectEdges(outputs []any, edges []indirectEdge) error {
	rows := make([]any, 0, len(edges))
	keep := make([]any, 0, len(edges))
	for _, e := range edges {
		job := asStr(e.Props["jobKey"])
		rows = append(rows, map[string]any{"from": e.From, "to": e.To, "job": job, "props": e.Props})
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
