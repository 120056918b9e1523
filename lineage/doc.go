// Package lineage is Headwater's lineage engine: it walks the temporal lineage graph hop by hop from a start node
// (one batched read per hop for the whole frontier), applies the temporal, evidence, publication and permission
// filters, enforces the traversal budgets (budgets.go), and reports what an answer lacks as gaps, with a signed
// cursor that continues a truncated page. Impact reports are walks too. Finding start nodes by name and
// materialising the nodes found are the catalog's (package catalog); the answer types are package api's.
//
// The query path is composed of decorators of two small interfaces, in this order: Service.Lineage checks the
// arguments, takes the caller's scope, reads the cursor and resolves the start, then asks its answerer — the
// results tier (resultcache.go) around the walker (walker.go) — and binds the continuation to the caller. The
// walker reads neighbours through a NeighborReader: the neighbour tier (cached_reader.go) around Neo4j
// (StoreReader).
//
// Invariants:
//   - depth counts dataset-to-dataset (field-to-field) steps; a job between two datasets is not a hop;
//   - every traversal has a visited set and the four budgets; reaching one returns the partial graph flagged
//     truncated, with the typed reasons (api.StopReason) on its TRUNCATED gap and a signed, principal-bound
//     cursor that continues it; decisions (caching) use the typed reasons, never the gap's message;
//   - the authz Policy sees every hop's candidates before any of them is returned or expanded;
//   - node ids are opaque encodings of internal keys (api.DatasetID, ...), never of names.
package lineage
