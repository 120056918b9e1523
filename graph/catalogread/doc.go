// Package catalogread holds the catalog's reads of the temporal graph: datasets, fields, jobs, runs and their
// events by key, name resolution at a time, event status, unresolved names and search. Its rows are graph's
// (graph.DatasetRow, graph.RunRow, ...). Store is graph.Store with these reads, for the catalog, search,
// lineage's name resolution and the resolvers; graph.Store keeps the session, health and migration methods
// (ADR 0033).
package catalogread

import "github.com/headwater-data/headwater/graph"

// Store is the graph store with the catalog's reads.
type Store struct{ *graph.Store }

// New returns the catalog reads over s.
func New(s *graph.Store) *Store { return &Store{Store: s} }
