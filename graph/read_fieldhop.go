package graph

import "context"

// FieldHopResult is one field-level hop: the column edges found, and for frontier fields without any column
// edge, whether their dataset has dataset-level lineage that way (column lineage missing, not lineage absent).
type FieldHopResult struct {
	Rows []HopRow
	// NoColumnLineage lists frontier field keys that have no column edge this way although their dataset has
	// dataset-level lineage this way.
	NoColumnLineage []string
}

func fieldHopCypher(down bool) string {
	col := `(s)-[c:COLUMN_FEEDS]->(n:Field)`
	dsLeg := `(d)-[a:INPUT_TO]->(:Job)`
	if !down {
		col = `(s)<-[c:COLUMN_FEEDS]-(n:Field)`
		dsLeg = `(d)<-[a:OUTPUT_TO]-(:Job)`
	}
	return `UNWIND $keys AS k
MATCH (s:Field {key: k})
OPTIONAL MATCH ` + col + `
WHERE c.validTo > $t AND ` + inForceOf("c") + `
OPTIONAL MATCH (j:Job {key: c.jobKey})
OPTIONAL MATCH (nd:Dataset {key: n.datasetKey})
WITH k, s, collect(CASE WHEN n IS NULL THEN null ELSE {dst: n.key, dd: n.datasetKey, dp: n.path,
  rel: properties(c), job: CASE WHEN j IS NULL THEN null ELSE ` + jobBrief + ` END,
  dstName: CASE WHEN nd IS NULL THEN null ELSE ` + nameAt("nd") + ` END} END) AS rows
RETURN k AS src, rows,
  size(rows) = 0 AND EXISTS { MATCH (d:Dataset {key: s.datasetKey}) MATCH ` + dsLeg + `
    WHERE a.validTo > $t AND ` + inForceOf("a") + ` } AS noColumnLineage`
}

// FieldHop reads the column-lineage neighbours of every frontier field in one query.
func (s *Store) FieldHop(ctx context.Context, q HopQuery) (FieldHopResult, error) {
	recs, err := s.readRecords(ctx, fieldHopCypher(q.Down), hopParams(q))
	if err != nil {
		return FieldHopResult{}, err
	}
	var res FieldHopResult
	for _, r := range recs {
		p := Props(r)
		src := p.Str("src")
		if p.Bool("noColumnLineage") {
			res.NoColumnLineage = append(res.NoColumnLineage, src)
		}
		for _, row := range p.List("rows") {
			res.Rows = append(res.Rows, HopRow{Src: src, Dst: row.Str("dst"), DstDataset: row.Str("dd"),
				DstPath: row.Str("dp"), Out: relOf(row.Sub("rel")), Job: jobOf(row.Sub("job")),
				DstName: nameOf(row.Sub("dstName"))})
		}
	}
	return res, nil
}
