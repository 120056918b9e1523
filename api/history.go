package api

import "time"

// TagHistory answers Dataset.tagHistory and Field.tagHistory (ADR 0082): every stretch of time a tag was in force,
// by name then start. PermissionsFiltered says the caller lacks VIEW_SENSITIVE on the dataset, so sensitive
// entries, if any, were left out (it does not depend on whether there were any).
type TagHistory struct {
	Entries             []*TagInterval
	PermissionsFiltered bool
}

// TagInterval is one stretch of time a tag was in force (graph.TagInterval as answered): Field nil for a
// dataset-level tag, ValidTo nil while in force.
type TagInterval struct {
	Name      string
	Field     *string
	Class     string
	Value     *string
	Source    *string
	ValidFrom time.Time
	ValidTo   *time.Time
	EventID   *string
	By        *string // the principal of the event that set it (ADR 0086); nil when not recorded
	Sensitive bool
}

// BlockHistory answers Dataset.blockHistory (ADR 0082): every explicit governance block with who, why and when.
// PermissionsFiltered is true for every caller without a global grant (an edge block naming a job or dataset the
// caller may not describe is left out whole).
type BlockHistory struct {
	Entries             []*BlockInterval
	PermissionsFiltered bool
}

// BlockInterval is one stretch of time a block was in force (graph.BlockInterval as answered): Edge nil for a
// field block, ValidTo nil while in force.
type BlockInterval struct {
	Field     string
	Edge      *BlockedEdge
	By        string
	Reason    string
	ValidFrom time.Time
	ValidTo   *time.Time
	EventID   *string
}

// BlockedEdge is the column edge an edge block names: into the block's field from From through Job.
type BlockedEdge struct {
	Job  BlockedJob
	From BlockedField
}

// BlockedJob names the job of a blocked edge.
type BlockedJob struct{ Namespace, Name string }

// BlockedField names the upstream field of a blocked edge.
type BlockedField struct{ Namespace, Name, Field string }
