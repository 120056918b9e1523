package trust

import "context"

// Reader is what the signals read (Store over Neo4j). Every method takes the filter it can apply in the
// database; permissions are applied by the Service on what it returns.
type Reader interface {
	InventoryVersion(ctx context.Context) (string, error)
	ExpectedJobs(ctx context.Context, f Filter) ([]ExpectedRow, error)
	JobsNamed(ctx context.Context, names [][2]string) ([]ReportedJob, error)
	DbtJobs(ctx context.Context, namespace string) ([]ReportedJob, error)
	Canaries(ctx context.Context) ([]CanaryRow, error)
	Runs(ctx context.Context, f Filter, from, cutoff int64) ([]JobRuns, error)
	Edges(ctx context.Context, f Filter, now int64) ([]EdgeRow, error)
	WrittenDatasets(ctx context.Context, f Filter, now int64) ([]DatasetRow, error)
	CatalogCommits(ctx context.Context, f Filter, from, before int64) ([]CommitGroup, error)
	Unresolved(ctx context.Context, f Filter, from int64) ([]UnresolvedRow, error)
	Activity(ctx context.Context, producer string, from int64) ([]ActivityRow, error)
	Rejections(ctx context.Context, producer string, from int64) ([]RejectRow, error)
	Samples(ctx context.Context, sig Signal, from int64) ([]Point, error)
	// ScopeSamples reads one scope's points of sig since from, oldest first: the inside-only values when inside.
	ScopeSamples(ctx context.Context, scope string, sig Signal, from int64, inside bool) ([]Point, error)
}

// Filter is what a request narrows the signals to ("" = any).
type Filter struct {
	Namespace   string
	Criticality string
}

// ReportedJob is a Job node an expected job matched.
type ReportedJob struct {
	Key, Namespace, Name, DbtUniqueID, DbtRole string
	Names                                      []string // every name a dbt node job was reported under (ADR 0027)
	LastSeenAt                                 int64
}

// ExpectedRow is one active expected job and the reported jobs its match names found.
type ExpectedRow struct {
	Key, Source, Namespace, Name, Type, Criticality, Owner, Schedule, DbtUniqueID string
	IntervalMs                                                                    int64
	Paused                                                                        bool
	Outputs                                                                       []string // "namespace|name"
	MatchNames                                                                    []string
	DbtMatches                                                                    []string // "<unique_id>|<role>"
	Matched                                                                       []ReportedJob
}

// JobRuns are one job's runs started in a window.
type JobRuns struct {
	Job     ReportedJob
	Started int64
	Open    []OpenRun // runs still without a terminal event, started before the cutoff
}

// OpenRun is a run with START (or RUNNING) and no terminal event.
type OpenRun struct {
	Key, RunID, State string
	StartedAt         int64
}

// EdgeRow is one current OBSERVED dataset-job relationship.
type EdgeRow struct {
	Job                          ReportedJob
	FirstSeenAt                  int64
	Runs                         int64
	DatasetKey, DatasetNamespace string
	DatasetName, Direction       string
	LastObservedAt               int64
}

// DatasetRow is a dataset some job currently writes: its writers and the sources of its column lineage in force.
type DatasetRow struct {
	Key, Namespace, Name string
	Writers              []ReportedJob  // at most maxWriters
	ColumnSources        []ColumnSource // distinct (source dataset, job), at most maxColumnSources
}

// CommitGroup is a table's catalog commits (Iceberg snapshots the sync recorded) in a window that the same set of
// jobs' runs reported writing (Writers empty: no run did).
type CommitGroup struct {
	Key, Namespace, Name string
	Writers              []ReportedJob
	Commits              int64
	Latest               int64 // ms, the newest commit of the group
}

// ColumnSource is a dataset and a job a current COLUMN_FEEDS edge into the dataset comes from.
type ColumnSource struct {
	DatasetKey, DatasetNamespace, DatasetName string
	Job                                       ReportedJob
}

// UnresolvedRow is one unresolved identity.
type UnresolvedRow struct {
	Namespace, Name, Reason string
	LastSeenAt              int64
}

// ActivityRow is one producer principal's events over the lookback.
type ActivityRow struct {
	Producer string
	Minutes  []int64 // distinct minutes (epoch ms / 60000) with at least one event received, ascending
	Counts   []int64 // events received in each of Minutes
	Last     int64   // latest receivedAt
}

// RejectRow counts rejected (quarantined) events of one producer for one rule.
type RejectRow struct {
	Producer, Rule string
	Count          int64
	Last           int64
}
