package olevent

import (
	"slices"
	"strings"
	"testing"
)

func TestLegacyTransformationMapping(t *testing.T) {
	tests := []struct {
		typ, desc string
		want      []Transformation
	}{
		{"", "", nil},
		{"IDENTITY", "", []Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}},
		{"identity", "as is", []Transformation{{Type: "DIRECT", Subtype: "IDENTITY", Description: "as is"}}},
		{"MASKED", "sha256(email)", []Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "sha256(email)", Masking: true}}},
		{"", "upper(x)", []Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "upper(x)"}}},
		{"CAST", "", []Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "CAST"}}},
		{"CAST", "cast(x as int)", []Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "cast(x as int)"}}},
	}
	for _, tt := range tests {
		if got := legacyTransformation(tt.typ, tt.desc); !slices.Equal(got, tt.want) {
			t.Errorf("legacyTransformation(%q, %q) = %+v, want %+v", tt.typ, tt.desc, got, tt.want)
		}
	}
}

// TestLegacyDoesNotOverrideExplicit: inputs with their own transformations keep them; the legacy pair only
// fills inputs without any.
func TestLegacyDoesNotOverrideExplicit(t *testing.T) {
	d := newTestDecoder(t, DefaultLimits())
	m := minimalRun()
	outFacets(m)["columnLineage"] = map[string]any{"fields": map[string]any{"x": map[string]any{
		"transformationType": "MASKED",
		"inputFields": []any{
			map[string]any{"namespace": "n", "name": "t", "field": "a", "transformations": []any{map[string]any{"type": "indirect", "subtype": "filter"}}},
			map[string]any{"namespace": "n", "name": "t", "field": "b"},
		},
	}}}
	ev := decodeOK(t, d, mustJSON(t, m))
	ins := ev.Outputs[0].ColumnLineage.Fields["x"]
	if ins[0].Transformations[0] != (Transformation{Type: "INDIRECT", Subtype: "FILTER"}) {
		t.Errorf("explicit transformation changed: %+v", ins[0].Transformations)
	}
	if !ins[1].Transformations[0].Masking {
		t.Errorf("legacy MASKED not applied: %+v", ins[1].Transformations)
	}
}

func TestErrorStrings(t *testing.T) {
	ve := &ValidationError{Field: "run.runId", Rule: RuleUUID, Message: "run.runId must be a UUID"}
	if s := ve.Error(); !strings.Contains(s, "run.runId") || !strings.Contains(s, RuleUUID) {
		t.Errorf("ValidationError.Error() = %q", s)
	}
	le := &InvalidLimitsError{Limit: "MaxDatasets", Reason: "must be positive"}
	if s := le.Error(); !strings.Contains(s, "MaxDatasets") {
		t.Errorf("InvalidLimitsError.Error() = %q", s)
	}
}
