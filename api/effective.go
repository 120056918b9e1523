package api

import "time"

// TagSource says where an effective tag comes from: reported by the dataset's owners in a tags facet, or derived
// along column lineage from a field carrying it (docs/governance.md, ADR 0055).
type TagSource string

// Tag sources.
const (
	TagFromFacet TagSource = "FACET"
	TagDerived   TagSource = "DERIVED"
)

// EffectiveTags answers Field.effectiveTags and Dataset.effectiveTags: the tags a field (or every field of a
// dataset) carries, its own and those derived along column lineage upstream by the piiFlow rules, each explained.
type EffectiveTags struct {
	AsOf  time.Time
	Depth int
	Tags  []*EffectiveTag
	// Partial says an origin further upstream may be missing: the walk stopped at a budget or the depth, or more
	// origins were found than one answer judges.
	Partial             bool
	Gaps                []Gap
	PermissionsFiltered bool
}

// EffectiveTag is one tag a field carries, with why.
type EffectiveTag struct {
	// Field is the field carrying it; nil for a dataset-level tag of the dataset asked (it applies to every field).
	Field *Field
	// Tag is the stored tag for a FACET tag, the class for a DERIVED one.
	Tag       Tag
	Class     string
	Source    TagSource
	Effect    PiiEffect
	Sensitive bool
	// Origin is the field whose own tag it is (the field itself for a FACET field tag); nil with Field.
	Origin    *Field
	OriginTag Tag
	Distance  int
	Path      []*PiiStep
	// Explanation says in words where the tag comes from.
	Explanation string
}

// Sensitivity answers Dataset.sensitivity: which fields of the dataset carry or derive a sensitive tag.
type Sensitivity struct {
	AsOf time.Time
	// Sensitive: at least one tag below is a sensitive one the caller may see.
	Sensitive bool
	// ViewSensitive: the caller holds VIEW_SENSITIVE on the dataset; without it the answer holds no sensitive tag.
	ViewSensitive bool
	// DatasetTags are the dataset-level sensitive tags (they apply to every field).
	DatasetTags         []*EffectiveTag
	Fields              []*SensitiveField
	Partial             bool
	Gaps                []Gap
	PermissionsFiltered bool
}

// SensitiveField is one field of a dataset carrying or deriving a sensitive tag.
type SensitiveField struct {
	Field *Field
	Tags  []*EffectiveTag
}
