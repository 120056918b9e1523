// Package hopread holds the lineage walk's reads of the temporal graph: one read per frontier and hop
// (dataset, job and field hops, and the name-only and targeted variants), each bounded by the caller's
// HopQuery. Its rows are graph's (graph.HopRow, graph.Rel, ...). Store is graph.Store with these reads, so the
// walk's NeighborReader (lineage/walk) is its one consumer; graph.Store keeps the session, health and
// migration methods (ADR 0033).
package hopread

import "github.com/headwater-data/headwater/graph"

// Store is the graph store with the walk's hop reads.
type Store struct{ *graph.Store }

// New returns the hop reads over s.
func New(s *graph.Store) *Store { return &Store{Store: s} }
