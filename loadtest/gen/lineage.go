package gen

import "math/rand/v2"

// Transformation subtypes of the OpenLineage columnLineage facet.
var (
	directSubtypes   = []string{"IDENTITY", "IDENTITY", "IDENTITY", "TRANSFORMATION", "TRANSFORMATION", "AGGREGATION"}
	indirectSubtypes = []string{"JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"}
)

const maskingShare = 0.05

// Transformation is one entry of an input field's transformations.
type Transformation struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Description string `json:"description"`
	Masking     bool   `json:"masking"`
}

// InputField is one input of a column mapping.
type InputField struct {
	DatasetID       int
	Field           string
	Transformations []Transformation
}

// ColumnMapping is the column lineage of one output: per output field its inputs, and the dataset-level
// INDIRECT dependencies kept once.
type ColumnMapping struct {
	Fields  map[string][]InputField
	Dataset []InputField
}

// ColumnLineage returns the mapping of the job's k-th output, or nil when that output has none. It is a pure
// function of (seed, job, k), so every run of the job reports the same mapping.
func (w *World) ColumnLineage(job, k int) *ColumnMapping {
	j := &w.Jobs[job]
	if k >= len(j.ColumnLineage) || !j.ColumnLineage[k] || len(j.Inputs) == 0 {
		return nil
	}
	r := newRand(w.Config.Seed, streamJobBase+uint64(job)*8+uint64(k))
	out := w.Datasets[j.Outputs[k]]
	m := &ColumnMapping{Fields: map[string][]InputField{}}
	for _, f := range out.Fields {
		for range 1 + r.IntN(2) {
			m.Fields[f.Path] = append(m.Fields[f.Path], w.directInput(j, r))
		}
		if r.IntN(10) == 0 { // a CASE WHEN on another column
			in := w.randomInput(j, r)
			in.Transformations = []Transformation{{Type: "INDIRECT", Subtype: "CONDITIONAL"}}
			m.Fields[f.Path] = append(m.Fields[f.Path], in)
		}
	}
	for i := range 1 + r.IntN(3) {
		in := w.randomInput(j, r)
		in.Transformations = []Transformation{{Type: "INDIRECT", Subtype: indirectSubtypes[(i+r.IntN(len(indirectSubtypes)))%len(indirectSubtypes)]}}
		m.Dataset = append(m.Dataset, in)
	}
	return m
}

func (w *World) randomInput(j *Job, r *rand.Rand) InputField {
	ds := w.Datasets[pick(r, j.Inputs)]
	return InputField{DatasetID: ds.ID, Field: pick(r, ds.Fields).Path}
}

func (w *World) directInput(j *Job, r *rand.Rand) InputField {
	in := w.randomInput(j, r)
	t := Transformation{Type: "DIRECT", Subtype: pick(r, directSubtypes)}
	if r.Float64() < maskingShare {
		t.Subtype, t.Masking, t.Description = "TRANSFORMATION", true, "sha2(value, 256)"
	}
	in.Transformations = []Transformation{t}
	return in
}
