// Package catalog answers the lookups around the lineage graph: datasets, jobs, runs, job versions, fields,
// aliases and versions by name or key (the resolvers' dataloaders batch the *ByKeys methods; the status of an
// event and the caller's quarantined events are package catalog/eventstatus, search is package search, over
// DatasetsByKeys and JobsByKeys). It also finds the start nodes of a lineage walk by name and
// materialises the nodes a walk found (package lineage calls FindJob, FindField, LookupDataset, Nodes,
// TouchNodes); it knows nothing of walks, budgets or cursors of lineage pages.
//
// Invariants (the rule of the walk, applied to lookups):
//   - whatever names a node is shown only when the caller may describe that node under its current and its asOf
//     identity; an invisible node is answered exactly like a missing one (NOT_FOUND), and the denial is audited;
//   - SQL, source code and run error messages need VIEW_SQL on the job and a caller who may describe every
//     dataset the job read or wrote; sensitive tags need VIEW_SENSITIVE; every sensitive dataset returned is
//     recorded in the request's audit;
//   - each guard is one policy call for the whole list it filters (guard.go).
package catalog
