package api

import "time"

// Pre-release impact (docs/declared-lineage.md, ADR 0056): the diff of a candidate dbt manifest against the
// project's current declarations, and what it affects downstream. JSON tags: the HTTP upload answers these
// types as JSON; GraphQL binds them by name.

// DiffChange is how one thing differs between the current declarations and the candidate.
type DiffChange string

// The changes.
const (
	DiffAdded   DiffChange = "ADDED"
	DiffRemoved DiffChange = "REMOVED"
	DiffRetyped DiffChange = "RETYPED"
)

// DiffNode is one model, seed or snapshot of a diff.
type DiffNode struct {
	UniqueID string `json:"uniqueId"`
	// Dataset is the node's relation (its dataset name).
	Dataset string `json:"dataset"`
}

// RenamedNode is a node the candidate says was renamed (a meta key or --renamed; never guessed).
type RenamedNode struct {
	From        string `json:"from"`
	To          string `json:"to"`
	FromDataset string `json:"fromDataset"`
	ToDataset   string `json:"toDataset"`
	// Source says who said so: "meta" (the candidate's meta key) or "flag" (the request's renamed parameter).
	Source string `json:"source"`
}

// ColumnChange is a declared column added, removed or retyped.
type ColumnChange struct {
	UniqueID string     `json:"uniqueId"`
	Dataset  string     `json:"dataset"`
	Column   string     `json:"column"`
	Change   DiffChange `json:"change"`
	FromType *string    `json:"fromType,omitempty"`
	ToType   *string    `json:"toType,omitempty"`
}

// DependencyChange is a declared input added to or removed from a node.
type DependencyChange struct {
	UniqueID   string     `json:"uniqueId"`
	Dataset    string     `json:"dataset"`
	Dependency string     `json:"dependency"`
	Change     DiffChange `json:"change"`
}

// ReleaseDiff is the candidate against the current declarations.
type ReleaseDiff struct {
	Added        []*DiffNode         `json:"added"`
	Removed      []*DiffNode         `json:"removed"`
	Renamed      []*RenamedNode      `json:"renamed"`
	Columns      []*ColumnChange     `json:"columns"`
	Dependencies []*DependencyChange `json:"dependencies"`
}

// ImpactEvidence labels what supports a claim that something is affected.
type ImpactEvidence struct {
	// Label is "declared only", "observed N days ago" or "observed N days ago and declared".
	Label          string     `json:"label"`
	Declared       bool       `json:"declared"`
	Observed       bool       `json:"observed"`
	LastObservedAt *time.Time `json:"lastObservedAt,omitempty"`
	// DaysAgo is the whole days since the latest observation (null when never observed).
	DaysAgo *int `json:"daysAgo,omitempty"`
}

// AffectedDataset is a dataset downstream of a change.
type AffectedDataset struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Direct: it reads the changed dataset itself (distance 1); indirect: through other datasets.
	Direct   bool            `json:"direct"`
	Distance int             `json:"distance"`
	Evidence *ImpactEvidence `json:"evidence"`
	// Jobs are the names of the jobs that write it from the dataset before it on the path.
	Jobs   []string `json:"jobs"`
	Owners []string `json:"owners"`
}

// AffectedField is a field downstream of a changed column.
type AffectedField struct {
	ID        string  `json:"id"`
	Namespace string  `json:"namespace"`
	Dataset   string  `json:"dataset"`
	Field     string  `json:"field"`
	Type      *string `json:"type,omitempty"`
	// Direct as the impact query says: some path to it carries only DIRECT transformations.
	Direct   bool            `json:"direct"`
	Distance int             `json:"distance"`
	Evidence *ImpactEvidence `json:"evidence"`
	// Job is the job of the path's last column edge.
	Job string `json:"job,omitempty"`
}

// AffectedExposure is a dbt exposure (a dashboard, notebook, analysis, ml model or application the manifest
// declares as a consumer, ADR 0070) downstream of a change: its consumer dataset is one of the change's datasets.
type AffectedExposure struct {
	UniqueID   string `json:"uniqueId"`
	Name       string `json:"name"`
	Label      string `json:"label,omitempty"`
	Type       string `json:"type"`
	URL        string `json:"url,omitempty"`
	OwnerName  string `json:"ownerName,omitempty"`
	OwnerEmail string `json:"ownerEmail,omitempty"`
	// Direct: it depends on the changed relation itself.
	Direct   bool            `json:"direct"`
	Distance int             `json:"distance"`
	Evidence *ImpactEvidence `json:"evidence"`
}

// AffectedJob is a job on the downstream of a change.
type AffectedJob struct {
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Direct: it reads the changed dataset itself.
	Direct   bool            `json:"direct"`
	Evidence *ImpactEvidence `json:"evidence"`
}

// ReleaseChangeKind is what kind of change an impact is of.
type ReleaseChangeKind string

// The change kinds that have downstream impact.
const (
	ChangeModelRemoved      ReleaseChangeKind = "MODEL_REMOVED"
	ChangeModelRenamed      ReleaseChangeKind = "MODEL_RENAMED"
	ChangeColumnRemoved     ReleaseChangeKind = "COLUMN_REMOVED"
	ChangeColumnRetyped     ReleaseChangeKind = "COLUMN_RETYPED"
	ChangeDependencyChanged ReleaseChangeKind = "DEPENDENCIES_CHANGED"
)

// ReleaseChange is one change of the diff with what it affects downstream.
type ReleaseChange struct {
	Kind      ReleaseChangeKind  `json:"kind"`
	UniqueID  string             `json:"uniqueId"`
	Namespace string             `json:"namespace"`
	Dataset   string             `json:"dataset"`
	Column    *string            `json:"column,omitempty"`
	Summary   string             `json:"summary"`
	Datasets  []*AffectedDataset `json:"datasets"`
	Fields    []*AffectedField   `json:"fields"`
	Jobs      []*AffectedJob     `json:"jobs"`
	// Exposures are the dbt exposures among Datasets (the candidate's, by their consumer dataset).
	Exposures []*AffectedExposure `json:"exposures"`
	Gaps      []ReleaseGap        `json:"gaps"`
	Truncated bool                `json:"truncated"`
}

// ReleaseGap is a gap limiting what a change's impact can claim (the lineage gap kinds, e.g. JOB_NOT_REPORTING,
// STALE_EDGE, NO_COLUMN_LINEAGE, DECLARED_ONLY, TRUNCATED).
type ReleaseGap struct {
	Kind    GapKind `json:"kind"`
	Message string  `json:"message"`
}

// ReleaseImpact is the pre-release impact of a candidate manifest.
type ReleaseImpact struct {
	// Candidate is the id the candidate is kept under for releaseImpact(candidate:) until ExpiresAt.
	Candidate string    `json:"candidate"`
	ExpiresAt time.Time `json:"expiresAt"`
	Project   string    `json:"project"`
	// CurrentDeclaredAt is the time of the current declarations compared with (null: none in the graph).
	CurrentDeclaredAt *time.Time       `json:"currentDeclaredAt,omitempty"`
	Diff              *ReleaseDiff     `json:"diff"`
	Changes           []*ReleaseChange `json:"changes"`
	// Owners of every affected dataset, sorted.
	Owners []string `json:"owners"`
	// Partial says a budget stopped some change's walk, or the changes were more than are assessed.
	Partial             bool      `json:"partial"`
	PermissionsFiltered bool      `json:"permissionsFiltered"`
	AsOf                time.Time `json:"asOf"`
	// DeclaredVersusObserved is where the candidate's declarations and the runs disagree (ADR 0069).
	DeclaredVersusObserved *DeclaredVersusObserved `json:"declaredVersusObserved"`
}

// DisagreementKind is how a declared or observed edge leg disagrees with the other kind of evidence.
type DisagreementKind string

// The disagreements (docs/declared-lineage.md "Declared versus observed").
const (
	// DisagreeNeverObserved: declared, and no run ever observed it.
	DisagreeNeverObserved DisagreementKind = "NEVER_OBSERVED"
	// DisagreeNoLongerObserved: declared, observed once, but a later complete run omitted it (its observed
	// interval closed).
	DisagreeNoLongerObserved DisagreementKind = "NO_LONGER_OBSERVED"
	// DisagreeStale: declared and observed, but not re-observed within the edge's staleness threshold.
	DisagreeStale DisagreementKind = "STALE"
	// DisagreeNotDeclared: observed by the runs (current), not declared by the candidate.
	DisagreeNotDeclared DisagreementKind = "NOT_DECLARED"
)

// Leg directions of a disagreement: the dataset is the job's input or its output.
const (
	LegInput  = "INPUT"
	LegOutput = "OUTPUT"
)

// EdgeDisagreement is one job-dataset leg of a dbt node's job on which the declaration and the runs disagree.
type EdgeDisagreement struct {
	Kind     DisagreementKind `json:"kind"`
	UniqueID string           `json:"uniqueId"`
	// Job is the name of the node's job.
	Job       string `json:"job"`
	Namespace string `json:"namespace"`
	Dataset   string `json:"dataset"`
	// Direction is INPUT (the job reads the dataset) or OUTPUT (writes it).
	Direction      string     `json:"direction"`
	LastObservedAt *time.Time `json:"lastObservedAt,omitempty"`
	DaysAgo        *int       `json:"daysAgo,omitempty"`
	// StaleAfterHours is the leg's staleness threshold (STALE only).
	StaleAfterHours *int   `json:"staleAfterHours,omitempty"`
	Message         string `json:"message"`
}

// TestDisagreement is a dbt test the candidate declares that no run of the project's tests reported.
type TestDisagreement struct {
	UniqueID string `json:"uniqueId"`
	Name     string `json:"name"`
	// Model is the unique id of the node it tests, Dataset that node's relation.
	Model   string  `json:"model"`
	Dataset string  `json:"dataset"`
	Column  *string `json:"column,omitempty"`
	Message string  `json:"message"`
}

// DeclaredVersusObserved compares the candidate's declarations with the runs' observations, on the nodes whose
// job the graph has (a node only the candidate has is in the diff as added).
type DeclaredVersusObserved struct {
	// DeclaredNotObserved are declared legs no run observed within their staleness threshold.
	DeclaredNotObserved []*EdgeDisagreement `json:"declaredNotObserved"`
	// ObservedNotDeclared are legs the runs observe (current intervals) that the candidate does not declare.
	ObservedNotDeclared []*EdgeDisagreement `json:"observedNotDeclared"`
	// TestsNotObserved are declared tests no run reported (of the latest runs of the node's test jobs).
	TestsNotObserved []*TestDisagreement `json:"testsNotObserved"`
	// EdgesChecked and TestsChecked count the declared legs and tests compared (of those the caller may see).
	EdgesChecked int `json:"edgesChecked"`
	TestsChecked int `json:"testsChecked"`
	// Partial: a list reached its bound (agreement.MaxItems) or the nodes were more than are checked.
	Partial             bool `json:"partial"`
	PermissionsFiltered bool `json:"permissionsFiltered"`
}
