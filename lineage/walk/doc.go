// Package walk is the lineage engine: one page of a traversal from a frontier, hop by hop, one batched read per
// hop for the whole frontier (NeighborReader: Neo4j, decorated by the neighbour-list cache tier), the temporal,
// evidence, publication and permission filters, the page's budgets, the gaps the page carries, and the
// continuation a cursor takes to the next page. It knows nothing of requests, names, result caching or cursor
// signing (package lineage) nor of how nodes are materialised (package catalog).
//
// Invariants:
//   - depth counts dataset-to-dataset (field-to-field) steps; a job between two datasets is not a hop;
//   - the walk is strictly level by level per direction, across pages too, so a node is reached first at its
//     shortest depth and never expanded twice per direction (the reached set);
//   - every page has the four budgets (hops, nodes, fan-out, deadline); reaching one stops the page with the
//     typed reason (api.StopReason) in Result.Stops and on the TRUNCATED gap, and a continuation (Result.Next);
//   - the gate sees every hop's candidates before any of them is returned or expanded; hidden neighbours never
//     count against a budget nor a fan-out marker, and are never projected.
package walk
