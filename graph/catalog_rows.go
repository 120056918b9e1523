package graph

import "fmt"

// The rows of the catalog's reads (graph/catalogread): datasets, fields, jobs, runs, events, search hits. The
// catalog, search, lineage's name resolution and the resolvers name them.

// DatasetRow is a dataset node as read, named by the identity valid at the read's asOf.
type DatasetRow struct {
	Key         string
	Namespace   string // identity valid at asOf
	Name        string
	Env         string
	CurrentNS   string // identity now
	CurrentName string
	CreatedAt   int64
	DroppedAt   int64
	Description string
	Owners      string   // JSON
	Tags        []string // current (Dataset.tags)
	UpdatedAt   int64
	TagHistory  []TagInterval // every tag's validity (version 6; nil before): TagsAt
	// BlockHistory is every explicit governance block's validity (version 7; nil before or without any): BlocksAt.
	BlockHistory []BlockInterval
}

// NameBinding is one DatasetName bound to a dataset.
type NameBinding struct {
	Namespace string
	Name      string
	Env       string
	Kind      string // PRIMARY, RENAMED, SYMLINK, ALIAS
	ValidFrom int64
	ValidTo   int64
}

// DatasetVersionRow is one version of a dataset.
type DatasetVersionRow struct {
	Key, Version, Lifecycle string
	FirstSeenAt             int64
	// An Iceberg snapshot's (ADR 0041): parent snapshot id, commit time, operation, summary (JSON object).
	ParentVersion, Operation, Summary string
	CommittedAt                       int64
}

// FieldRow is a field node as read. ObservedOnRead: no owner of the dataset reported the field; only readers saw
// it (ADR 0018).
type FieldRow struct {
	Key, DatasetKey, Path, Type, Description string
	ValidFrom, ValidTo                       int64
	ObservedOnRead                           bool
	// Paths and PathFroms are a renamed field's names and the times they took effect (a rename that kept the
	// field's stable id, ADR 0041); empty for a field never renamed. Path is the last.
	Paths     []string
	PathFroms []int64
}

// PathAt is the field's path at t (ms): the name in force then, its first name before it existed.
func (r FieldRow) PathAt(t int64) string {
	if len(r.Paths) == 0 || len(r.Paths) != len(r.PathFroms) {
		return r.Path
	}
	p := r.Paths[0]
	for i, f := range r.PathFroms {
		if f <= t {
			p = r.Paths[i]
		}
	}
	return p
}

// JobRow is a job node as read.
type JobRow struct {
	Key, Namespace, Name, ProcessingType, JobType, Integration, Description string
	FirstSeenAt, LastSeenAt                                                 int64
	// A dbt node's job (docs/adr/0027-dbt-job-identity.md): its dbt_node unique_id, role (DbtRoleNode,
	// DbtRoleTests) and every name it was reported under; "" and nil for other jobs.
	DbtUniqueID, DbtRole string
	Names                []string
	// Tags are the job tags facet's tags (`key[=value]`, sorted; projection version 6, ADR 0068), nil for none.
	Tags []string
	// TagHistory is every job tag's validity, derived from the job tag log (projection version 9, ADR 0090; nil
	// before, or for a job no job tags facet named): TagsAt.
	TagHistory []TagInterval
}

// JobVersionRow is one definition of a job.
type JobVersionRow struct {
	Key, JobKey, DefinitionHash, SQL, SourceCode, SourceCodeLocation string
	ValidFrom, ValidTo                                               int64
}

// EventStatusRow says what became of an event id.
type EventStatusRow struct {
	Projected   bool
	Quarantined bool
	Event       EventRow
	Reason      string
	Field       string
	Rule        string
	Producer    string
	Principal   string // the principal of the quarantined event
	ReceivedAt  int64
	// Payload is the projected event's stored payload (project.UnresolvedInPayload reads what it lost).
	Payload any
}

// UnresolvedRow is an identifier that could not be bound to one dataset.
type UnresolvedRow struct {
	Key, Namespace, Name, Reason string
	FirstSeenAt, LastSeenAt      int64
}

// SearchHit is a dataset or job whose name contains the query (ignoring case).
type SearchHit struct {
	Label string // Dataset or Job
	Key   string
	Name  string
}

// AmbiguousJobNameError: a job name several dbt node jobs were reported under (two unique_ids or roles under one
// name, a producer's fault). The caller decides among those it may see; a job is never guessed.
type AmbiguousJobNameError struct {
	Namespace, Name string
	Jobs            []JobRow // at most MaxJobsPerName, in key order
}

func (e *AmbiguousJobNameError) Error() string {
	return fmt.Sprintf("job name %q in namespace %q was reported for %d dbt nodes", e.Name, e.Namespace, len(e.Jobs))
}

// RunRow is a run node as read.
type RunRow struct {
	Key, RunID, JobKey, JobVersionKey, State, ParentRunID, RootRunID, ErrorMessage, ProcessingType string
	ParentKey, RootKey                                                                             string
	ConflictingStates                                                                              []string
	StartedAt, EndedAt, LastEventTime                                                              int64
	// RunIDConflict: a run of another job has the same runId (the two runs are separate; ADR 0019).
	RunIDConflict bool
}

// RunIORow is one dataset a run read (Rel READ) or wrote (Rel WROTE).
type RunIORow struct {
	Rel, DatasetKey, DatasetVersion, Publication string
	FirstAt, LastAt                              int64
	// ScanSnapshotID, ScanMatch and ReportedVersion are an input's Iceberg scan report as matched by the
	// projector (READ.scanSnapshotId, scanMatch, reportedVersion; ADR 0084); "" without a scan report.
	ScanSnapshotID, ScanMatch, ReportedVersion string
}

// EventRow is one projected event of a run.
type EventRow struct {
	// ID is the producer's event id; Key the node's key (EventKey: the id scoped by its principal).
	ID, Key, Kind, EventType, Producer string
	RunKey                             string
	EventTime, ReceivedAt              int64
}
