// Package api is the answer model of Headwater's query API: the types the lineage walk (package lineage) and the
// catalog lookups (package catalog) answer with, which gqlgen binds to the GraphQL schema by name (autobind in
// gqlgen.yml), the public node ids, and the domain errors the one error presenter maps to extensions.code.
//
// Invariants:
//   - types only: no I/O, no permission decisions; a field here is a field of the schema (or an internal key the
//     resolvers follow, never shown);
//   - node ids are opaque encodings of internal keys (ids.go), never of names;
//   - Error.Message is safe for clients; Error.Cause is never shown.
package api
