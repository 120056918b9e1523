package catalogread

import (
	"context"

	"github.com/headwater-data/headwater/graph"
)

const fieldProjection = `f{.key, .datasetKey, .path, .type, .description, .validFrom, .validTo, .observedOnRead, .paths, .pathFroms}`

func fieldRowOf(p graph.Props) graph.FieldRow {
	return graph.FieldRow{Key: p.Str("key"), DatasetKey: p.Str("datasetKey"), Path: p.Str("path"), Type: p.Str("type"),
		Description: p.Str("description"), ValidFrom: p.Int("validFrom"), ValidTo: p.Int("validTo"),
		ObservedOnRead: p.Bool("observedOnRead"), Paths: p.Strs("paths"), PathFroms: p.Ints("pathFroms")}
}

func (s *Store) fieldRows(ctx context.Context, cypher string, params map[string]any) ([]graph.FieldRow, error) {
	recs, err := s.ReadRecords(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	out := make([]graph.FieldRow, len(recs))
	for i, r := range recs {
		out[i] = fieldRowOf(graph.Props(r).Sub("f"))
	}
	return out, nil
}

// FieldsOf lists the fields of a dataset valid at asOf, by path.
func (s *Store) FieldsOf(ctx context.Context, datasetKey string, asOf int64) ([]graph.FieldRow, error) {
	return s.fieldRows(ctx, `MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field)
WHERE f.validFrom <= $t AND $t < f.validTo
RETURN `+fieldProjection+` AS f ORDER BY f.path, f.key`, map[string]any{"k": datasetKey, "t": asOf})
}

// FieldAt finds the field of a dataset with this path valid at asOf: by its path then (a renamed field answers
// under the name it had at asOf, ADR 0041).
func (s *Store) FieldAt(ctx context.Context, datasetKey, path string, asOf int64) (graph.FieldRow, bool, error) {
	rows, err := s.fieldRows(ctx, `MATCH (f:Field {datasetKey: $k, path: $p})
WHERE f.validFrom <= $t AND $t < f.validTo
RETURN `+fieldProjection+` AS f
UNION
MATCH (f:Field {datasetKey: $k}) WHERE f.paths IS NOT NULL AND $p IN f.paths AND f.validFrom <= $t AND $t < f.validTo
RETURN `+fieldProjection+` AS f`,
		map[string]any{"k": datasetKey, "p": path, "t": asOf})
	if err != nil {
		return graph.FieldRow{}, false, err
	}
	var best graph.FieldRow
	found := false
	for _, r := range rows {
		if r.PathAt(asOf) == path && (!found || r.ValidFrom > best.ValidFrom) {
			best, found = r, true
		}
	}
	return best, found, nil
}

// FieldsByKeys reads fields by key.
func (s *Store) FieldsByKeys(ctx context.Context, keys []string) (map[string]graph.FieldRow, error) {
	rows, err := s.fieldRows(ctx, `UNWIND $keys AS k MATCH (f:Field {key: k}) RETURN `+fieldProjection+` AS f`,
		map[string]any{"keys": anyList(keys)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.FieldRow, len(rows))
	for _, r := range rows {
		out[r.Key] = r
	}
	return out, nil
}
