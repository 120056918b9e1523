package project

// The projector's steps hand each other typed values, not shared maps on the transaction writer
// (docs/adr/0060-the-projectors-explicit-plan.md):
//
//	claimEvents(recs)                 -> claimed{fresh, conflicts, replayed}
//	bindIdentities(fresh), storeEvents(fresh)
//	upsertJobs(fresh)                 -> jobQueue (the jobs whose metadata the batch stamped)
//	projectDatasets(fresh, replayed,  -> jobQueue (jobs of datasets whose cuts changed: folded in full; jobs whose
//	                refold)              column lineage touches changed fields; refold: the refused datasets to
//	                                     write again, staleDirty)
//	projectRuns(fresh)                -> runFolds{states, jobQueue} (the runs folded and written; their jobs and
//	                                     the earliest start of a changed run per job)
//	projectJobEdges(jobPlan)          <- the three queues merged, the runs folded, the claimed events
//
// What stays on the writer is the attempt's context (the transaction, the fold-state attempts, the metrics) and the
// two accumulators that flow into the Result only: the keys touched and the count of unresolved identifiers.

import "github.com/headwater-data/headwater/ingest/fold"

// claimed is the claim step's outcome: the events this attempt applies, those whose id names a stored event with
// other content, and the events projected before that are read again from their stored payload after a crash.
type claimed struct {
	fresh     []*rec
	conflicts []*rec
	replayed  []*rec
}

// jobQueue is what one step found about the jobs whose edges must be folded again in this attempt.
type jobQueue struct {
	jobs  map[string]bool  // the jobs to fold
	full  map[string]bool  // of those, the ones folded from all their runs (a dataset's cuts changed, an upgrade)
	since map[string]int64 // per job, the earliest first-event time of a run the step changed
}

// add queues jobs.
func (q *jobQueue) add(keys ...string) {
	for _, k := range keys {
		if q.jobs == nil {
			q.jobs = map[string]bool{}
		}
		q.jobs[k] = true
	}
}

// addFull queues a job to be folded from all its runs.
func (q *jobQueue) addFull(k string) {
	q.add(k)
	if q.full == nil {
		q.full = map[string]bool{}
	}
	q.full[k] = true
}

// changed queues a job one of whose runs starting at start changed.
func (q *jobQueue) changed(k string, start int64) {
	q.add(k)
	if q.since == nil {
		q.since = map[string]int64{}
	}
	if old, ok := q.since[k]; !ok || start < old {
		q.since[k] = start
	}
}

// merge adds another step's queue: the union of the jobs and of the full folds, the earliest change per job.
func (q *jobQueue) merge(o jobQueue) {
	for k := range o.jobs {
		q.add(k)
	}
	for k := range o.full {
		q.addFull(k)
	}
	for k, t := range o.since {
		q.changed(k, t)
	}
}

// allFull marks every queued job to be folded from all its runs (upgrades that moved runs between jobs).
func (q *jobQueue) allFull() {
	for k := range q.jobs {
		q.addFull(k)
	}
}

// runFolds is the run step's outcome: the runs it folded and wrote, by run key, and the jobs they queue.
type runFolds struct {
	states map[string]*fold.RunState
	jobs   jobQueue
}

// jobPlan is the job-edge step's whole input.
type jobPlan struct {
	jobQueue
	runs  map[string]*fold.RunState // the runs this attempt folded, by run key: what a held job's runs are updated with
	fresh []*rec                    // the events this attempt claimed: a held job's new declarations, its positions
}
