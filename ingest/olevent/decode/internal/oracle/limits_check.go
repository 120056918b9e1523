package oracle

import (
	"encoding/json"
	"fmt"

	"github.com/headwater-data/headwater/ingest/olevent"
	facets "github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle/ofacets"
)

// checkCounts enforces MaxDatasets and MaxFacetsPerEntity.
func (d *Decoder) checkCounts(w *wireEvent) *olevent.ValidationError {
	if n := len(w.Inputs) + len(w.Outputs); n > d.lim.MaxDatasets {
		f := "outputs"
		if len(w.Inputs) > d.lim.MaxDatasets {
			f = "inputs"
		}
		return invalid(f, olevent.RuleMaxDatasets, "the event lists %d inputs and outputs, over the limit of %d", n, d.lim.MaxDatasets)
	}
	if w.Run != nil {
		if ve := d.checkFacetCount("run.facets", w.Run.Facets); ve != nil {
			return ve
		}
	}
	if w.Job != nil {
		if ve := d.checkFacetCount("job.facets", w.Job.Facets); ve != nil {
			return ve
		}
	}
	if w.Dataset != nil {
		if ve := d.checkDatasetFacets("dataset", w.Dataset); ve != nil {
			return ve
		}
	}
	return d.checkDatasetList(w)
}

func (d *Decoder) checkDatasetList(w *wireEvent) *olevent.ValidationError {
	for i := range w.Inputs {
		if ve := d.checkDatasetFacets(fmt.Sprintf("inputs[%d]", i), &w.Inputs[i]); ve != nil {
			return ve
		}
	}
	for i := range w.Outputs {
		if ve := d.checkDatasetFacets(fmt.Sprintf("outputs[%d]", i), &w.Outputs[i]); ve != nil {
			return ve
		}
	}
	return nil
}

// checkDatasetFacets counts a dataset's facets, input facets and output facets together.
func (d *Decoder) checkDatasetFacets(path string, ds *facets.WireDataset) *olevent.ValidationError {
	n := len(ds.Facets) + len(ds.InputFacets) + len(ds.OutputFacets)
	if n > d.lim.MaxFacetsPerEntity {
		return invalid(path, olevent.RuleMaxFacets, "%s has %d facets, over the limit of %d", path, n, d.lim.MaxFacetsPerEntity)
	}
	return nil
}

func (d *Decoder) checkFacetCount(path string, facets map[string]json.RawMessage) *olevent.ValidationError {
	if len(facets) > d.lim.MaxFacetsPerEntity {
		return invalid(path, olevent.RuleMaxFacets, "%s has %d facets, over the limit of %d", path, len(facets), d.lim.MaxFacetsPerEntity)
	}
	return nil
}
