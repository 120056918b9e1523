package olevent

import "fmt"

// Rules named in ValidationError.Rule and FacetIssue.Rule.
const (
	RuleJSON           = "json"              // not parseable JSON, or not an object
	RuleRequired       = "required"          // a required field is missing
	RuleType           = "type"              // a field has the wrong JSON type
	RuleEnum           = "enum"              // a value outside the allowed set
	RuleFormat         = "format"            // date-time or URI not well-formed
	RuleUUID           = "uuid"              // not a UUID
	RuleNotEmpty       = "not-empty"         // an empty string where a name is needed
	RuleMaxLength      = "max-length"        // a string longer than MaxStringBytes
	RuleMaxDepth       = "max-depth"         // nesting deeper than MaxJSONDepth
	RuleMaxFacets      = "max-facets"        // more facets on one entity than MaxFacetsPerEntity
	RuleMaxDatasets    = "max-datasets"      // more inputs+outputs than MaxDatasets
	RuleTooFarInFuture = "too-far-in-future" // eventTime after now+MaxFuture
	RuleBeforeHorizon  = "before-horizon"    // eventTime before now-Horizon
	RuleShape          = "shape"             // neither RunEvent, JobEvent nor DatasetEvent
	RuleSchema         = "schema"            // any other envelope schema violation
	RuleFieldCase      = "field-case"        // an envelope key differing from a field name only by case
	RuleUTF8           = "utf8"              // invalid UTF-8 or an escaped lone surrogate in a string
	RuleDuplicateKey   = "duplicate-key"     // an object names the same key twice (after unescaping)
)

// ValidationError says which envelope field broke which rule. Field is a path like "run.runId" or
// "inputs[2].name"; "$" is the whole document.
type ValidationError struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("invalid event: %s (field %s, rule %s)", e.Message, e.Field, e.Rule)
}
