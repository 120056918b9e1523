package catalog

import (
	"context"
	"encoding/json"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
)

// The lookups of the governance mutations (ADR 0067, package governance/mutation): the dataset a mutation names
// (unknown and invisible the same NOT_FOUND) and its latest facet of a kind.

// FindDataset resolves a dataset name (canonicalised like events) at t for a caller that must be able to
// describe it; unknown and invisible datasets are the same NOT_FOUND.
func (s *Catalog) FindDataset(ctx context.Context, ns, name string, t int64) (graph.DatasetRow, error) {
	row, _, err := s.findDataset(ctx, ns, name, t)
	return row, err
}

// DatasetFacet is the dataset's latest facet named facet as projected (nil when it has none). The caller has
// checked that it may describe the dataset.
func (s *Catalog) DatasetFacet(ctx context.Context, datasetKey, facet string) (json.RawMessage, error) {
	raw, err := s.store.DatasetFacets(ctx, datasetKey)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	if raw == "" {
		return nil, nil
	}
	var all map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &all) != nil {
		return nil, nil
	}
	return all[facet], nil
}
