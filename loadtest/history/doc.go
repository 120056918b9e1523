// Package history bulk-loads a design-size lineage graph straight into Neo4j, following docs/graph-model.md
// exactly: Dataset with DatasetName/NAMES, Job, Field/HAS_FIELD, compacted INPUT_TO/OUTPUT_TO edges with a
// year of validity intervals, COLUMN_FEEDS and INDIRECT_FEEDS from the generator's column lineage, and a
// window of run detail (Run, OF_JOB, READ, WROTE). It writes with large UNWIND batches from parallel writers
// so that query benchmarks can run on a realistic graph within minutes.
//
// Invariants: everything it writes lives under the world's namespace prefix (dataset and job namespaces and
// keys derived from them; run ids are derived from the seed and the prefix), it refuses a prefix that already
// has data, and every Result carries the counts read back from Neo4j.
package history
