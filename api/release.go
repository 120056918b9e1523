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
	Gaps      []ReleaseGap       `json:"gaps"`
	Truncated bool               `json:"truncated"`
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
}
