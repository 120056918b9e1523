// Package fold holds the projector's pure folds:
//   - the run fold (FoldRun): a run's state from its events (RunEvent, the event as the run fold sees it);
//   - the dataset log (DatasetLog): a dataset's observations (Obs, the log's stored entries, in ObsLess order)
//     and the schemas they reference, merged batch by batch (Merge), sealed as it grows into chunks (Seal,
//     LogChunk) with the field fold up to the cut kept (LogBase), restored when a late observation falls into
//     them (LateFor, Restore), and whether a batch only repeats the schema in force (RepeatsLatestSchema);
//   - the field-history fold (FieldHistories, FoldFields): a dataset's field histories from its observation log,
//     continuing from a sealed base (FieldBase), and the dataset's cut times (LifecycleTimes);
//   - the job folds: from a job's runs (Run, as the job fold sees them), the cut times and field histories of its
//     datasets and its declarations (Decl) to the validity intervals of its INPUT_TO / OUTPUT_TO edges
//     (ObservedEdges, DeclaredEdges), its COLUMN_FEEDS and INDIRECT_FEEDS (FoldColumns, FoldIndirect), the
//     evidence it shares with them (SharedEvidence) and the checkpoint a later fold starts from
//     (AdvanceCheckpoint).
//
// Every function is a function of its arguments: no Neo4j, no clock, no shared state; the same inputs in any
// order give the same result (docs/adr/0006-projection-and-intervals.md).
//
// ingest/project reads the inputs from the graph or its fold state, converts its event record to what these
// folds read (runEventOf) and a run's state to a job's run (jobRunOf), calls them and writes what they return; it
// also stamps the derived properties with the projection version (the stored form is its own) and owns the
// encodings of what it stores (packState, encodeCols, the dataset state's wire form, the log's chunks), the
// sealing limits and the chunks' keys. The JSON names of Obs, LogBase, LogChunk and DatasetLog are stored:
// changing them changes the stored form (docs/adr/0061-the-job-folds-in-their-own-package.md,
// docs/adr/0077-column-feeds-digests-in-the-job-fold-state-and-the-remaining-fold-moves.md part 2).
package fold
