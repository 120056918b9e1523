package governance

import (
	"strings"

	"github.com/headwater-data/headwater/api"
)

// Transformation types and subtypes as OpenLineage names them (the projector keeps them as sent).
const (
	typeDirect     = "DIRECT"
	typeIndirect   = "INDIRECT"
	subIdentity    = "IDENTITY"
	subAggregation = "AGGREGATION"
)

// Step is the judgement of one column edge for one class: the rule, whether the tag crosses it (and as what),
// and why not when it does not.
type Step struct {
	Rule api.PiiRule
	// Effect is what the edge passes on from a field carrying the tag: CARRIED, AGGREGATED, INFLUENCED, or ""
	// when nothing crosses (Stop says why).
	Effect api.PiiEffect
	Stop   api.PiiStopReason
}

// Judge decides one edge by its transformations: the strongest DIRECT transformation that does not mask wins
// (IDENTITY, then another non-aggregating subtype, then AGGREGATION); if every DIRECT one masks, the edge is
// MASKED; an edge with INDIRECT ones only is influence; an edge without any carries (UNKNOWN).
func Judge(ts []api.Transformation, r Rules) Step {
	if len(ts) == 0 {
		return Step{Rule: api.PiiRuleUnknown, Effect: api.PiiCarried}
	}
	var identity, transform, aggregate, masked, indirect bool
	for _, t := range ts {
		switch {
		case string(t.Type) == typeDirect && t.Masking:
			masked = true
		case string(t.Type) == typeDirect && subOf(t) == subIdentity:
			identity = true
		case string(t.Type) == typeDirect && subOf(t) == subAggregation:
			aggregate = true
		case string(t.Type) == typeDirect:
			transform = true
		case string(t.Type) == typeIndirect:
			indirect = true
		default: // a type the spec does not name: nothing says it does not carry
			transform = true
		}
	}
	switch {
	case identity:
		return Step{Rule: api.PiiRuleIdentity, Effect: api.PiiCarried}
	case transform:
		return Step{Rule: api.PiiRuleTransformation, Effect: api.PiiCarried}
	case aggregate && r.Aggregation == AggregationStops:
		return Step{Rule: api.PiiRuleAggregation, Stop: api.PiiStopAggregation}
	case aggregate:
		return Step{Rule: api.PiiRuleAggregation, Effect: api.PiiAggregated}
	case masked:
		return Step{Rule: api.PiiRuleMasked, Stop: api.PiiStopMasked}
	case indirect:
		return Step{Rule: api.PiiRuleIndirect, Effect: api.PiiInfluenced}
	}
	return Step{Rule: api.PiiRuleUnknown, Effect: api.PiiCarried}
}

func subOf(t api.Transformation) string {
	if t.Subtype == nil {
		return ""
	}
	return *t.Subtype
}

// Explain says a step's rule in words for the answer.
func Explain(s Step, ts []api.Transformation) string {
	kinds := describe(ts)
	switch s.Rule {
	case api.PiiRuleIdentity:
		return "DIRECT/IDENTITY (" + kinds + "): the value is copied, the tag carries"
	case api.PiiRuleTransformation:
		return "DIRECT/TRANSFORMATION (" + kinds + "): the value is derived without masking, the tag carries"
	case api.PiiRuleAggregation:
		if s.Stop != "" {
			return "DIRECT/AGGREGATION (" + kinds + "): this class is configured to stop at aggregations"
		}
		return "DIRECT/AGGREGATION (" + kinds + "): the tag carries as aggregated"
	case api.PiiRuleMasked:
		return "masking (" + kinds + "): the transformation masks the value, the tag stops"
	case api.PiiRuleIndirect:
		return "INDIRECT (" + kinds + "): the value only influences the output (join key, filter, grouping, ...); the tag does not carry"
	}
	return "no transformation reported: the tag carries (nothing says it does not)"
}

func describe(ts []api.Transformation) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		p := string(t.Type)
		if s := subOf(t); s != "" {
			p += "/" + s
		}
		if t.Masking {
			p += " masking"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
