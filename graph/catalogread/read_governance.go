package catalogread

import (
	"context"

	"github.com/headwater-data/headwater/graph"
)

// DatasetFacets is the Dataset node's latest facets by key, as stored (JSON object; "" for an unknown key): the
// governance mutations read the current tags facet's entries from it (ADR 0067).
func (s *Store) DatasetFacets(ctx context.Context, key string) (string, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (d:Dataset {key: $k}) RETURN d{.facets} AS d`, map[string]any{"k": key})
	if err != nil || len(recs) == 0 {
		return "", err
	}
	return graph.Props(recs[0]).Sub("d").Str("facets"), nil
}
