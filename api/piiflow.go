package api

import "time"

// PiiFlow answers piiFlow: how a tag class flows along column lineage from its origins (docs/governance.md).
type PiiFlow struct {
	Tag                 string
	AsOf                time.Time
	Depth               int
	Origins             []*PiiOrigin
	Reached             []*PiiReach
	Stops               []*PiiStop
	Truncated           bool
	Gaps                []Gap
	PermissionsFiltered bool
}

// PiiOrigin is a field carrying a tag of the class (its own, or its dataset's).
type PiiOrigin struct {
	Field *Field
	Tags  []Tag
}

// PiiEffect is what reached a field: the tag itself, the tag as aggregated, or only an influence.
type PiiEffect string

// Effects, strongest first.
const (
	PiiCarried    PiiEffect = "CARRIED"
	PiiAggregated PiiEffect = "AGGREGATED"
	PiiInfluenced PiiEffect = "INFLUENCED"
)

// PiiRule is the rule one column edge was judged by.
type PiiRule string

// Rules.
const (
	PiiRuleIdentity       PiiRule = "IDENTITY"       // DIRECT/IDENTITY: carries
	PiiRuleTransformation PiiRule = "TRANSFORMATION" // DIRECT/TRANSFORMATION (or another DIRECT subtype): carries
	PiiRuleAggregation    PiiRule = "AGGREGATION"    // DIRECT/AGGREGATION: carries as aggregated, or stops (configured)
	PiiRuleIndirect       PiiRule = "INDIRECT"       // INDIRECT only (JOIN, FILTER, GROUP_BY, ...): influence, never the tag
	PiiRuleMasked         PiiRule = "MASKED"         // every DIRECT transformation masks: stops
	PiiRuleUnknown        PiiRule = "UNKNOWN"        // no transformations reported: carries (nothing says it does not)
)

// PiiReach is a field the flow reached, with the path of its strongest effect.
type PiiReach struct {
	Field    *Field
	Effect   PiiEffect
	Origin   *Field
	Distance int
	Path     []*PiiStep
}

// PiiStep is one column edge of a path with the rule it was judged by.
type PiiStep struct {
	Edge        *LineageEdge
	Rule        PiiRule
	Explanation string
}

// PiiStopReason says why a flow went no further from a field.
type PiiStopReason string

// Stop reasons.
const (
	PiiStopMasked          PiiStopReason = "MASKED"
	PiiStopAggregation     PiiStopReason = "AGGREGATION"
	PiiStopDepth           PiiStopReason = "DEPTH"
	PiiStopPermissions     PiiStopReason = "PERMISSIONS"
	PiiStopBudget          PiiStopReason = "BUDGET"
	PiiStopNoColumnLineage PiiStopReason = "NO_COLUMN_LINEAGE"
	// PiiStopBlocked: an explicit governance block on the field or the edge (ADR 0067), judged before the rules.
	PiiStopBlocked PiiStopReason = "BLOCKED"
)

// PiiStop is where a flow stopped: the last field it reached, why, and the edge it did not cross when there is one.
type PiiStop struct {
	Field   *Field
	Reason  PiiStopReason
	Edge    *LineageEdge
	Next    *Field
	Message string
}
