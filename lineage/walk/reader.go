package walk

import (
	"context"
	"fmt"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/hopread"
)

// HopKind is the kind of the frontier nodes of one hop read.
type HopKind string

// Hop kinds.
const (
	HopDataset HopKind = "D"
	HopField   HopKind = "F"
	HopJob     HopKind = "J"
)

// HopRequest is one batched neighbour read for a frontier of one kind and one direction.
type HopRequest struct {
	Kind    HopKind
	Keys    []string
	Down    bool
	AsOf    int64    // epoch ms the intervals must contain
	AsOfKey string   // how AsOf appears in cache keys: exact ms for an explicit asOf, a bucket for "now"
	Pubs    []string // publication states that count
	// Limit, when positive, asks for only the first Limit neighbours of each node in key order (dataset hops).
	Limit int
	// Names asks a dataset hop for each neighbour's key and identities only (no relationships, no job): enough
	// to check permissions on every neighbour of a hub without projecting the ones the caller may not see.
	Names bool
	// Only, when set, restricts a dataset hop to the neighbours it lists per frontier key (full rows, uncached).
	Only map[string][]string
}

// HopResult is what a hop read found.
type HopResult struct {
	Rows []graph.HopRow
	// Far names, per frontier field whose dataset has dataset-level lineage this way (field hops), the datasets
	// at the other end of that lineage.
	Far map[string][]graph.NameRef
	// Gens are the cache generations of the nodes this answer depends on (empty when no cache is involved).
	Gens map[string]int64
}

// NeighborReader reads the lineage neighbours of a frontier. The cache decorates it (package cache).
type NeighborReader interface {
	Neighbors(ctx context.Context, req HopRequest) (HopResult, error)
}

// StoreReader reads neighbours straight from Neo4j.
type StoreReader struct{ Store *hopread.Store }

var _ NeighborReader = StoreReader{}

// Neighbors implements NeighborReader with one query.
func (r StoreReader) Neighbors(ctx context.Context, req HopRequest) (HopResult, error) {
	q := graph.HopQuery{Keys: req.Keys, Down: req.Down, AsOf: req.AsOf, Pubs: req.Pubs}
	if req.Kind == HopDataset {
		q.Limit = req.Limit
	}
	switch {
	case req.Kind == HopDataset && req.Names:
		rows, err := r.Store.DatasetHopNames(ctx, q)
		return HopResult{Rows: rows}, err
	case req.Kind == HopDataset && req.Only != nil:
		rows, err := r.Store.DatasetHopTo(ctx, q, req.Only)
		return HopResult{Rows: rows}, err
	}
	switch req.Kind {
	case HopDataset:
		rows, err := r.Store.DatasetHop(ctx, q)
		return HopResult{Rows: rows}, err
	case HopJob:
		rows, err := r.Store.JobHop(ctx, q)
		return HopResult{Rows: rows}, err
	case HopField:
		res, err := r.Store.FieldHop(ctx, q)
		return HopResult{Rows: res.Rows, Far: res.Far}, err
	}
	return HopResult{}, fmt.Errorf("hop kind %q: %w", req.Kind, api.ErrBadRequest)
}
