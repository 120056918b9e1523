// Package governance is what Headwater knows about tags for governance teams (docs/governance.md, ADR 0042): tag
// classes with a hierarchy (`pii.email` sits below `pii`), the propagation rule of each class along column
// lineage, the rules read from the governance file, and the flow of a class over a set of column edges.
//
// It is pure: no I/O beyond reading the governance file, no permission decisions. The lineage service walks the
// graph (budgets, permission checks per hop) and hands the edges the caller may see to Propagate; the answer it
// builds is package api's PiiFlow.
//
// Invariants:
//   - a step's rule is decided from the OpenLineage transformations on the edge only (type, subtype, masking),
//     with the typed values api.PiiRule and api.PiiStopReason; strings are for people;
//   - INDIRECT transformations never carry a tag, they are reported as influence one step from a carrying field;
//     a masking transformation never carries it; an edge without transformations carries it (the conservative
//     choice: nothing says it does not);
//   - a field is reported once, with its strongest effect (carried > aggregated > influenced) and the shortest
//     path of that effect; the flow never goes deeper than the depth it is given.
package governance
