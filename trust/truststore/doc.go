// Package truststore reads the trust signals from Neo4j: the expected jobs of the inventory and the Job nodes
// they matched, runs, edges, written datasets with their writers and column sources, unresolved identities,
// producer activity and rejections, and the coverage samples (the one write). Store implements trust.Reader,
// the interface the trust service declares and reads through; its rows are trust's (ADR 0033). It applies the
// filters the database can apply; permissions are the service's.
package truststore
