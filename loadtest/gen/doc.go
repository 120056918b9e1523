// Package gen generates realistic, reproducible OpenLineage 2-0-2 traffic for Headwater's load tests.
//
// A World is the static shape: datasets across platforms, namespaces and environments, the jobs that read and
// write them (Airflow, Spark, dbt and Flink-like producers), hub datasets with 1,000+ consumers, schemas and
// the column-lineage mappings of a quarter of the outputs. A Stream walks simulated time over a World and emits
// RunEvents (2-4 per run), the occasional JobEvent and DatasetEvent, retries, FAIL/ABORT with partial output,
// late and duplicate deliveries, renames and streaming jobs.
//
// Invariants: the same Config (seed included) gives byte-identical output; nothing here reads the wall clock or
// global random state; every namespace carries Config.Prefix so a run never collides with other data.
package gen
