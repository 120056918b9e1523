package decode

import (
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// TestLegacyDoesNotOverrideExplicit: inputs with their own transformations keep them; the legacy pair only
// fills inputs without any.
func TestLegacyDoesNotOverrideExplicit(t *testing.T) {
	d := newTestDecoder(t, olevent.DefaultLimits())
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
	if ins[0].Transformations[0] != (olevent.Transformation{Type: "INDIRECT", Subtype: "FILTER"}) {
		t.Errorf("explicit transformation changed: %+v", ins[0].Transformations)
	}
	if !ins[1].Transformations[0].Masking {
		t.Errorf("legacy MASKED not applied: %+v", ins[1].Transformations)
	}
}
