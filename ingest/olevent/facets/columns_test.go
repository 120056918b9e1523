package facets

import (
	"slices"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestLegacyTransformationMapping(t *testing.T) {
	tests := []struct {
		typ, desc string
		want      []olevent.Transformation
	}{
		{"", "", nil},
		{"IDENTITY", "", []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}},
		{"identity", "as is", []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY", Description: "as is"}}},
		{"MASKED", "sha256(email)", []olevent.Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "sha256(email)", Masking: true}}},
		{"", "upper(x)", []olevent.Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "upper(x)"}}},
		{"CAST", "", []olevent.Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "CAST"}}},
		{"CAST", "cast(x as int)", []olevent.Transformation{{Type: "DIRECT", Subtype: "TRANSFORMATION", Description: "cast(x as int)"}}},
	}
	for _, tt := range tests {
		if got := legacyTransformation(tt.typ, tt.desc); !slices.Equal(got, tt.want) {
			t.Errorf("legacyTransformation(%q, %q) = %+v, want %+v", tt.typ, tt.desc, got, tt.want)
		}
	}
}
