// Package lineage is Headwater's query engine: it resolves identifiers, walks the temporal lineage graph hop by
// hop (one batched read per hop for the whole frontier), applies the temporal, evidence, publication and
// permission filters, enforces the traversal budgets (budgets.go), and reports what an answer lacks as gaps.
//
// Invariants:
//   - depth counts dataset-to-dataset (field-to-field) steps; a job between two datasets is not a hop;
//   - every traversal has a visited set and the four budgets; reaching one returns the partial graph flagged
//     truncated with a signed, principal-bound cursor that continues it;
//   - the authz Policy sees every hop's candidates before any of them is returned or expanded;
//   - node ids are opaque encodings of internal keys (ids.go), never of names.
package lineage
