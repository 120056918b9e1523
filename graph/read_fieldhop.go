package graph

import "context"

// FieldHopResult is one field-level hop: the column edges found, and for frontier fields without any column
// edge, whether their dataset has dataset-level lineage that way (column lineage missing, not lineage absent).
type FieldHopResult struct {
	Rows []HopRow
	// NoColumnLineage lists frontier field keys that have no column edge this way although their dataset has
	// dataset-level lineage this way.
	NoColumnLineage []string
	// Far names, per key in NoColumnLineage, the datasets (current identity, at most MaxFarDatasets) its dataset
	// has dataset-level lineage with this way, so the caller can tell whether any of them is visible.
	Far map[string][]NameRef
}

// MaxFarDatasets bounds the far-side datasets a field hop reports per field without column lineage.
const MaxFarDatasets = 50

func fieldHopCypher(down bool) string {
	col := `(s)-[c:COLUMN_FEEDS]->(n:Field)`
	dsLeg := `(d:Dataset {key: s.datasetKey})-[a:INPUT_TO]->(:Job)-[b:OUTPUT_TO]->(o:Dataset)`
	if !down {
		col = `(s)<-[c:COLUMN_FEEDS]-(n:Field)`
		dsLeg = `(d:Dataset {key: s.datasetKey})<-[a:OUTPUT_TO]-(:Job)<-[b:INPUT_TO]-(o:Dataset)`
	}
	return `UNWIND $keys AS k
MATCH (s:Field {key: k})
OPTIONAL MATCH ` + col + `
WHERE c.validTo > $t AND ` + inForceOf("c") + `
OPTIONAL MATCH (j:Job {key: c.jobKey})
OPTIONAL MATCH (nd:Dataset {key: n.datasetKey})
WITH k, s, collect(CASE WHEN n IS NULL THEN null ELSE {dst: n.key, dd: n.datasetKey, dp: n.path,
  rel: properties(c), job: CASE WHEN j IS NULL THEN null ELSE ` + jobBrief + ` END,
  dstName: CASE WHEN nd IS NULL THEN null ELSE ` + nameAt("nd") + ` END,
  dstCurrent: CASE WHEN nd IS NULL THEN null ELSE nd{.namespace, .name, .env} END} END) AS rows
RETURN k AS src, rows,
  CASE WHEN size(rows) = 0 THEN [` + dsLeg + `
    WHERE a.validTo > $t AND ` + inForceOf("a") + ` AND b.validTo > $t AND ` + inForceOf("b") + `
    | o{.namespace, .name, .env}][..$maxFar] ELSE [] END AS far`
}

// FieldHop reads the column-lineage neighbours of every frontier field in one query.
func (s *Store) FieldHop(ctx context.Context, q HopQuery) (FieldHopResult, error) {
	params := hopParams(q)
	params["maxFar"] = MaxFarDatasets
	recs, err := s.readRecords(ctx, fieldHopCypher(q.Down), params)
	if err != nil {
		return FieldHopResult{}, err
	}
	res := FieldHopResult{Far: map[string][]NameRef{}}
	for _, r := range recs {
		p := Props(r)
		src := p.Str("src")
		if far := p.List("far"); len(far) > 0 {
			res.NoColumnLineage = append(res.NoColumnLineage, src)
			for _, f := range far {
				res.Far[src] = append(res.Far[src], nameOf(f))
			}
		}
		for _, row := range p.List("rows") {
			res.Rows = append(res.Rows, HopRow{Src: src, Dst: row.Str("dst"), DstDataset: row.Str("dd"),
				DstPath: row.Str("dp"), Out: relOf(row.Sub("rel")), Job: jobOf(row.Sub("job")),
				DstName: nameOf(row.Sub("dstName")), DstCurrent: nameOf(row.Sub("dstCurrent"))})
		}
	}
	return res, nil
}
