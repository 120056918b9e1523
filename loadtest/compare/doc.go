// Package compare measures Headwater's lineage answer against the naive alternative users reach for first:
// one variable-length Cypher path query straight against Neo4j, filtered afterwards for temporal validity and
// publication. For each root, direction and depth it asks both, checks that they return the same datasets and
// the same dataset-to-dataset edges (a mismatch is counted and described, never hidden), and measures the
// latency of each (per-query timeout on the naive side, timeouts counted). See docs/loadtest.md.
package compare
