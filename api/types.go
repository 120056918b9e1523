package api

import "time"

// Direction of a walk.
type Direction string

// Directions.
const (
	Upstream   Direction = "UPSTREAM"
	Downstream Direction = "DOWNSTREAM"
	Both       Direction = "BOTH"
)

// Granularity of a walk.
type Granularity string

// Granularities.
const (
	GranDataset Granularity = "DATASET"
	GranField   Granularity = "FIELD"
)

// EvidenceKind says where an edge's evidence comes from.
type EvidenceKind string

// Evidence kinds.
const (
	Observed EvidenceKind = "OBSERVED"
	Declared EvidenceKind = "DECLARED"
)

// RunState is a run's state.
type RunState string

// Publication of an output.
type Publication string

// TransformationType is DIRECT or INDIRECT.
type TransformationType string

// IORole is READ or WROTE.
type IORole string

// NameKind says how a name binds to a dataset.
type NameKind string

// EventState is what became of an event.
type EventState string

// DbtRole is the role of a dbt node's job for that node (docs/adr/0027-dbt-job-identity.md): NODE or TESTS.
type DbtRole string

// dbt node job roles (graph.DbtRoleNode, graph.DbtRoleTests).
const (
	DbtRoleNode  DbtRole = "NODE"
	DbtRoleTests DbtRole = "TESTS"
)

// Event states.
const (
	EventProjected   EventState = "PROJECTED"
	EventQuarantined EventState = "QUARANTINED"
	EventPending     EventState = "PENDING"
)

// GapKind names an incompleteness of an answer.
type GapKind string

// Gap kinds.
const (
	GapTruncated          GapKind = "TRUNCATED"
	GapDeclaredOnly       GapKind = "DECLARED_ONLY"
	GapStaleEdge          GapKind = "STALE_EDGE"
	GapNoColumnLineage    GapKind = "NO_COLUMN_LINEAGE"
	GapUnresolvedIdentity GapKind = "UNRESOLVED_IDENTITY"
	GapRunWithoutTerminal GapKind = "RUN_WITHOUT_TERMINAL"
	GapJobNotReporting    GapKind = "JOB_NOT_REPORTING"
	GapProducerStale      GapKind = "PRODUCER_STALE"
	GapUnreportedWrite    GapKind = "UNREPORTED_WRITE"
)

// DatasetRef names a dataset as a producer would.
type DatasetRef struct{ Namespace, Name string }

// FieldRef names a field of a dataset.
type FieldRef struct{ Namespace, Name, Field string }

// JobRef names a job.
type JobRef struct{ Namespace, Name string }

// NodeRef names a start node: exactly one of the three.
type NodeRef struct {
	Dataset *DatasetRef
	Field   *FieldRef
	Job     *JobRef
}

// Node is anything with a public id that a lineage graph can hold.
type Node interface {
	IsNode()
	GetID() string
}

// SearchResult is a dataset or a job found by search.
type SearchResult interface{ IsSearchResult() }

// Alias is a name bound to a dataset over an interval.
type Alias struct {
	Namespace   string
	Name        string
	Environment *string
	Kind        NameKind
	ValidFrom   *time.Time
	ValidTo     *time.Time
}

// Owner of a dataset.
type Owner struct {
	Name string
	Type *string
}

// Tag on a dataset or field.
type Tag struct {
	Name string
	// Source and ValidFrom are the tags facet entry's source and the event time it took effect, for a current
	// dataset tag of a graph with tag histories (projection version 6); nil otherwise.
	Source    *string
	ValidFrom *time.Time
}

// Dataset as answered.
type Dataset struct {
	ID               string
	Key              string
	Namespace        string
	Name             string
	Environment      *string
	CurrentNamespace string
	CurrentName      string
	ResolvedFrom     *Alias
	Description      *string
	CreatedAt        *time.Time
	DroppedAt        *time.Time
	Owners           []Owner
	Tags             []Tag
	AsOf             time.Time // the instant the dataset was asked at; default for fields(asOf)
}

// IsNode implements Node.
func (*Dataset) IsNode() {}

// GetID implements Node.
func (d *Dataset) GetID() string { return d.ID }

// IsSearchResult implements SearchResult.
func (*Dataset) IsSearchResult() {}

// Field as answered.
type Field struct {
	ID          string
	Key         string
	DatasetKey  string
	Path        string
	Type        *string
	Description *string
	ValidFrom   time.Time
	ValidTo     *time.Time
	// ObservedOnRead: no owner of the dataset reported this field; producers reading the dataset did (ADR 0018).
	ObservedOnRead bool
	Tags           []Tag
	AsOf           time.Time
}

// IsNode implements Node.
func (*Field) IsNode() {}

// GetID implements Node.
func (f *Field) GetID() string { return f.ID }

// JobVersion is one definition of a job.
type JobVersion struct {
	ID                 string
	Key                string
	JobKey             string
	DefinitionHash     string
	SQL                *string
	SourceCodeLocation *string
	// SQLWithheld says SQL and source code were removed: the caller lacks VIEW_SQL on the job, or the job read
	// or wrote a dataset the caller may not describe.
	SQLWithheld bool
	ValidFrom   *time.Time
	ValidTo     *time.Time
}

// Job as answered.
type Job struct {
	ID             string
	Key            string
	Namespace      string
	Name           string
	ProcessingType *string
	JobType        *string
	Integration    *string
	Description    *string
	FirstSeenAt    *time.Time
	LastSeenAt     *time.Time
	DbtUniqueID    *string
	DbtRole        *DbtRole
	Names          []string
	// TagNames are the job tags facet's tags as stored; Job.tags answers them through Catalog.JobTags (a
	// sensitive one only with VIEW_SENSITIVE on the job).
	TagNames []string
	// TagIntervals are the job's tag history as stored (projection version 9, ADR 0090; Sensitive not yet set):
	// Job.tagHistory answers them through Catalog.JobTagHistory.
	TagIntervals []*TagInterval
	AsOf         time.Time
}

// IsNode implements Node.
func (*Job) IsNode() {}

// GetID implements Node.
func (j *Job) GetID() string { return j.ID }

// IsSearchResult implements SearchResult.
func (*Job) IsSearchResult() {}

// Run as answered.
type Run struct {
	ID                string
	Key               string
	RunID             string
	JobKey            string
	JobVersionKey     string
	State             RunState
	ConflictingStates []RunState
	StartedAt         *time.Time
	EndedAt           *time.Time
	ErrorMessage      *string
	// ErrorMessageWithheld says the error message was removed: the caller lacks VIEW_SQL on the job, or the run
	// read or wrote a dataset the caller may not describe.
	ErrorMessageWithheld bool
	ParentRunID          string
	RootRunID            string
	ParentKey            string // the parent run's key (ParentRunID under the job the parent facet names)
	RootKey              string
	// RunIDConflict: another job reported a run with the same runId; shown only to the job's producers (ADR 0019).
	RunIDConflict bool
}

// IsNode implements Node.
func (*Run) IsNode() {}

// GetID implements Node.
func (r *Run) GetID() string { return r.ID }

// RunIO is one dataset a run read or wrote.
type RunIO struct {
	Role            IORole
	DatasetKey      string
	Version         *string
	Publication     Publication
	FirstObservedAt *time.Time
	ObservedAt      time.Time
	Scan            *RunIOScan // an input with an Iceberg scan report (ADR 0084); nil otherwise
}

// ScanMatch is how an input's Iceberg scan report was matched to the table's recorded snapshots (ADR 0084):
// MATCHED, UNMATCHED or AMBIGUOUS (fold.ScanMatched, ...).
type ScanMatch string

// RunIOScan is what an input's Iceberg scan report said (SnapshotID as sent) and what was made of it.
type RunIOScan struct {
	SnapshotID      string
	Match           ScanMatch
	ReportedVersion *string
}

// RunEventSummary is one projected event of a run.
type RunEventSummary struct {
	EventID    string
	EventType  *string
	EventTime  time.Time
	ReceivedAt *time.Time
	Producer   *string
}

// RestrictedNode stands for every neighbour of one visible node in one direction that the caller may not see
// (REDACT mode only). It says only that there is at least one: no name, no count, no job, no evidence. Its id is
// an HMAC over (principal, visible node, direction); it is never a start node and never expanded.
type RestrictedNode struct {
	ID          string
	NeighbourOf string    `json:"of"`
	Direction   Direction `json:"dir"`
}

// IsNode implements Node.
func (*RestrictedNode) IsNode() {}

// GetID implements Node.
func (r *RestrictedNode) GetID() string { return r.ID }

// SearchConnection is one page of search results.
type SearchConnection struct {
	Nodes               []SearchResult
	EndCursor           *string
	HasNextPage         bool
	PermissionsFiltered bool
}

// RunConnection is one page of runs.
type RunConnection struct {
	Nodes       []*Run
	EndCursor   *string
	HasNextPage bool
}

// DatasetVersion is one version of a dataset.
type DatasetVersion struct {
	DatasetKey  string // the dataset's (not in the API; writtenBy reads by it)
	Version     string
	Lifecycle   *string
	FirstSeenAt *time.Time
	// An Iceberg snapshot's (ADR 0041); nil / empty for other versions.
	ParentVersion *string
	CommittedAt   *time.Time
	Operation     *string
	Summary       []*VersionSummaryEntry
}

// VersionSummaryEntry is one key of an Iceberg snapshot's summary.
type VersionSummaryEntry struct {
	Key, Value string
}

// DatasetVersionConnection is one page of dataset versions.
type DatasetVersionConnection struct {
	Nodes       []*DatasetVersion
	EndCursor   *string
	HasNextPage bool
}

// Interval is one validity interval of an edge.
type Interval struct {
	ValidFrom   time.Time
	ValidTo     *time.Time
	Publication *Publication
}

// Evidence is one evidence record of an edge (one per kind, never merged).
type Evidence struct {
	Kind        EvidenceKind
	Producer    *string
	Source      *string
	EventIDs    []string
	RunID       *string
	RunState    *RunState
	JobVersion  *string
	ObservedAt  time.Time
	Publication *Publication
	Derivation  *string
}

// Transformation of a column edge.
type Transformation struct {
	Type        TransformationType
	Subtype     *string
	Masking     bool
	Description *string
}

// LineageEdge points the way data flows, from an upstream to a downstream node.
type LineageEdge struct {
	ID              string
	From            string
	To              string
	JobKey          string
	ValidFrom       time.Time
	ValidTo         *time.Time
	Intervals       []Interval
	LastObservedAt  *time.Time
	Stale           bool
	Evidence        []Evidence
	Transformations []Transformation
}

// Gap names what an answer lacks.
type Gap struct {
	Kind    GapKind
	Message string
	Nodes   []string
	Edges   []string
	// StopReasons are the budgets that stopped the page, in the order first reached (TRUNCATED gaps only; nil on
	// the others). Decisions use them, never the message, which is for people.
	StopReasons []StopReason
	// Numerator of Denominator are the figure a JOB_NOT_REPORTING, PRODUCER_STALE or UNREPORTED_WRITE gap is part of ("3 of 10
	// expected jobs writing this answer's datasets are not reporting"); nil on the other kinds.
	Numerator, Denominator *int
	// Since is when what the gap is about last reported (a producer's last event, an expected job's matched
	// job's last event); nil when it never did and on the other kinds.
	Since *time.Time
}

// AnswerCoverage is how much of one answer the inventory vouches for: of the answer's datasets, those some
// expected job the caller may describe lists as an output, and of those the ones with such a writer that
// reported (ADR 0032).
type AnswerCoverage struct {
	Datasets           int
	WithExpectedWriter int
	Reporting          int
	Label              string
}

// StopReason names a traversal budget that stopped a page.
type StopReason string

// Stop reasons.
const (
	StopDepthCap   StopReason = "DEPTH_CAP"   // the server's hop cap per page (or per impact report)
	StopNodeBudget StopReason = "NODE_BUDGET" // the node budget of the page (maxNodes)
	StopFanOut     StopReason = "FAN_OUT"     // a node had more neighbours than one page shows
	StopDeadline   StopReason = "DEADLINE"    // the page's time budget
)

// FanOutMarker says a node had more neighbours than one page shows.
type FanOutMarker struct {
	Node      string
	Direction Direction
	Shown     int
}

// LineageGraph is one page of a lineage answer.
type LineageGraph struct {
	Nodes               []Node
	Edges               []*LineageEdge
	Truncated           bool
	Cursor              *string
	FanOutMarkers       []FanOutMarker
	Gaps                []Gap
	PermissionsFiltered bool
	AsOf                time.Time
	// Coverage is set by the trust gaps after the results tier (never cached; ADR 0032).
	Coverage *AnswerCoverage `json:",omitempty"`
}

// ImpactedField is a field affected by a change, with the column path to it.
type ImpactedField struct {
	Field    *Field
	Distance int
	Path     []*LineageEdge
}

// ImpactReport answers what a change to a field affects.
type ImpactReport struct {
	Direct              []*ImpactedField
	Indirect            []*ImpactedField
	Jobs                []*Job
	Truncated           bool
	Gaps                []Gap
	PermissionsFiltered bool
	Coverage            *AnswerCoverage
}

// EventStatus answers what became of an event.
type EventStatus struct {
	ID         string
	State      EventState
	Reason     *string
	Field      *string
	Producer   *string
	ReceivedAt *time.Time
	EventType  *string
	EventTime  *time.Time
	Rule       *string // the rule a quarantined event broke
	// Run is the run a projected RunEvent belongs to (nil for other events and runs the caller may not describe).
	Run *Run
	// UnresolvedIdentities are the dataset identifiers the event stated that were not bound to one dataset.
	UnresolvedIdentities []*UnresolvedIdentity
}

// UnresolvedIdentity is an identifier that names no single dataset: it could not be canonicalised (the rule it
// broke is in the reason) or its binding conflicted. It is recorded, never dropped.
type UnresolvedIdentity struct {
	Namespace string
	Name      string
	Reason    string
}

// QuarantinedEvent is one event Headwater refused or could not project, as its producer may see it.
type QuarantinedEvent struct {
	ID         string
	Reason     string
	Field      *string
	Rule       *string
	Stage      string // gateway (refused before it was accepted) or consumer (refused or failed after)
	Producer   *string
	Principal  string
	ReceivedAt *time.Time
}

// QuarantinedEventConnection is one page of quarantined events, in event-id order.
type QuarantinedEventConnection struct {
	Nodes       []*QuarantinedEvent
	EndCursor   *string
	HasNextPage bool
}
