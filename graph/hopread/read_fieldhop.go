package hopread

import (
	"context"

	"github.com/headwater-data/headwater/graph"
)

// MaxFarDatasets bounds the far-side datasets a field hop reports per field without column lineage.
const MaxFarDatasets = 50

func fieldHopCypher(down bool) string {
	col := `(s)-[c:COLUMN_FEEDS]->(n:Field)`
	dsLeg := `(d)-[a:INPUT_TO]->(:Job)-[b:OUTPUT_TO]->(o:Dataset)`
	if !down {
		col = `(s)<-[c:COLUMN_FEEDS]-(n:Field)`
		dsLeg = `(d)<-[a:OUTPUT_TO]-(:Job)<-[b:INPUT_TO]-(o:Dataset)`
	}
	return `UNWIND $keys AS k
MATCH (s:Field {key: k})
OPTIONAL MATCH ` + col + `
WHERE c.validTo > $t AND ` + graph.InForceCypher("c") + `
OPTIONAL MATCH (j:Job {key: c.jobKey})
OPTIONAL MATCH (nd:Dataset {key: n.datasetKey})
WITH k, s, collect(CASE WHEN n IS NULL THEN null ELSE {dst: n.key, dd: n.datasetKey, dp: n.path,
  rel: ` + graph.EvidenceCypher("c", "j", graph.ColumnEvidenceProps) + `, job: CASE WHEN j IS NULL THEN null ELSE ` + jobBrief + ` END,
  dstName: CASE WHEN nd IS NULL THEN null ELSE ` + graph.NameAtCypher("nd") + ` END,
  dstCurrent: CASE WHEN nd IS NULL THEN null ELSE nd{.namespace, .name, .env} END} END) AS rows
WITH s.datasetKey AS dk, collect({k: k, rows: rows}) AS fs
OPTIONAL MATCH (d:Dataset {key: dk})
WITH fs, CASE WHEN d IS NULL THEN [] ELSE [` + dsLeg + `
    WHERE a.validTo > $t AND ` + graph.InForceCypher("a") + ` AND b.validTo > $t AND ` + graph.InForceCypher("b") + `
    | o{.namespace, .name, .env}][..$maxFar] END AS far
UNWIND fs AS f
RETURN f.k AS src, f.rows AS rows, far
ORDER BY src`
}

// FieldHop reads the column-lineage neighbours of every frontier field in one query.
func (s *Store) FieldHop(ctx context.Context, q graph.HopQuery) (graph.FieldHopResult, error) {
	params := hopParams(q)
	params["maxFar"] = MaxFarDatasets
	recs, err := s.ReadRecords(ctx, fieldHopCypher(q.Down), params)
	if err != nil {
		return graph.FieldHopResult{}, err
	}
	res := graph.FieldHopResult{Far: map[string][]graph.NameRef{}}
	for _, r := range recs {
		p := graph.Props(r)
		src := p.Str("src")
		if far := p.List("far"); len(far) > 0 {
			for _, f := range far {
				res.Far[src] = append(res.Far[src], graph.NameRefOf(f))
			}
		}
		for _, row := range p.List("rows") {
			res.Rows = append(res.Rows, graph.HopRow{Src: src, Dst: row.Str("dst"), DstDataset: row.Str("dd"),
				DstPath: row.Str("dp"), Out: relOf(row.Sub("rel")), Job: jobOf(row.Sub("job")),
				DstName: graph.NameRefOf(row.Sub("dstName")), DstCurrent: graph.NameRefOf(row.Sub("dstCurrent"))})
		}
	}
	return res, nil
}
