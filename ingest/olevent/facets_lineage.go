package olevent

import (
	"maps"
	"slices"
	"strings"
)

// Entity types in the `lineage` facet and transformation types of column lineage.
const (
	EntityDataset = "DATASET"
	EntityJob     = "JOB"

	TransformDirect   = "DIRECT"
	TransformIndirect = "INDIRECT"
)

type wireTransformation struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Description string `json:"description"`
	Masking     bool   `json:"masking"`
}

func checkTransformations(sub string, ts []wireTransformation) *problem {
	for i, t := range ts {
		switch strings.ToUpper(t.Type) {
		case TransformDirect, TransformIndirect:
		default:
			p := join(sub, idx("transformations", i)) + ".type"
			return bad(p, RuleEnum, "%s must be DIRECT or INDIRECT, got %q", p, truncate(t.Type))
		}
	}
	return nil
}

func transformations(ts []wireTransformation) []Transformation {
	if len(ts) == 0 {
		return nil
	}
	out := make([]Transformation, 0, len(ts))
	for _, t := range ts {
		out = append(out, Transformation{
			Type: strings.ToUpper(t.Type), Subtype: strings.ToUpper(t.Subtype),
			Description: t.Description, Masking: t.Masking,
		})
	}
	return out
}

// wireLineageInput is a source of a `lineage` facet relationship (dataset or job).
type wireLineageInput struct {
	Type            string               `json:"type"`
	Namespace       string               `json:"namespace"`
	Name            string               `json:"name"`
	Field           string               `json:"field"`
	RunID           string               `json:"runId"`
	Transformations []wireTransformation `json:"transformations"`
}

func (in *wireLineageInput) check(sub string) *problem {
	switch in.Type {
	case EntityDataset:
		return firstProblem(need(sub, "namespace", in.Namespace), need(sub, "name", in.Name),
			checkTransformations(sub, in.Transformations))
	case EntityJob:
		return firstProblem(checkJobRef(sub, in.Namespace, in.Name, in.RunID), checkTransformations(sub, in.Transformations))
	}
	return bad(join(sub, "type"), RuleEnum, "%s must be DATASET or JOB, got %q", join(sub, "type"), truncate(in.Type))
}

// checkJobRef: a job reference names both namespace and name, or neither (the event's own job).
func checkJobRef(sub, ns, name, runID string) *problem {
	if (ns == "") != (name == "") {
		return bad(sub, RuleRequired, "%s must give both namespace and name, or neither", sub)
	}
	if runID != "" {
		return needUUID(join(sub, "runId"), runID)
	}
	return nil
}

func (in *wireLineageInput) input() LineageInput {
	return LineageInput{
		Type: in.Type, Namespace: in.Namespace, Name: in.Name, Field: in.Field,
		RunID: strings.ToLower(in.RunID), Transformations: transformations(in.Transformations),
	}
}

func checkInputs(sub string, ins []wireLineageInput) *problem {
	for i := range ins {
		if p := ins[i].check(idx(sub, i)); p != nil {
			return p
		}
	}
	return nil
}

func inputs(ins []wireLineageInput) []LineageInput {
	out := make([]LineageInput, 0, len(ins))
	for i := range ins {
		out = append(out, ins[i].input())
	}
	return out
}

type wireFieldEntry struct {
	Inputs []wireLineageInput `json:"inputs"`
}

func checkFieldEntries(sub string, fields map[string]wireFieldEntry) *problem {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if p := checkInputs(join(join(sub, k), "inputs"), fields[k].Inputs); p != nil {
			return p
		}
	}
	return nil
}

func fieldInputs(fields map[string]wireFieldEntry) map[string][]LineageInput {
	if fields == nil {
		return nil
	}
	out := make(map[string][]LineageInput, len(fields))
	for k, f := range fields {
		out[k] = inputs(f.Inputs)
	}
	return out
}

// wireDatasetLineage is the dataset-level `lineage` facet.
type wireDatasetLineage struct {
	Inputs []wireLineageInput        `json:"inputs"`
	Fields map[string]wireFieldEntry `json:"fields"`
}

func checkDatasetLineage(l *wireDatasetLineage) *problem {
	return firstProblem(checkInputs("inputs", l.Inputs), checkFieldEntries("fields", l.Fields))
}

func (l *wireDatasetLineage) facet() *LineageFacet {
	f := &LineageFacet{AllInputs: inputs(l.Inputs)}
	for _, in := range f.AllInputs {
		if in.Type == EntityDataset {
			f.Inputs = append(f.Inputs, Identifier{Namespace: in.Namespace, Name: in.Name, Type: EntityDataset})
		}
	}
	if l.Fields != nil {
		f.Fields = make(map[string][]InputField, len(l.Fields))
		for k, fe := range l.Fields {
			f.Fields[k] = datasetFieldInputs(fe.Inputs)
		}
	}
	return f
}

// datasetFieldInputs keeps the DATASET sources of a field entry as column-lineage inputs.
func datasetFieldInputs(ins []wireLineageInput) []InputField {
	out := make([]InputField, 0, len(ins))
	for _, in := range ins {
		if in.Type == EntityDataset {
			out = append(out, InputField{Namespace: in.Namespace, Name: in.Name, Field: in.Field,
				Transformations: transformations(in.Transformations)})
		}
	}
	return out
}

// wireJobLineage is the job-level `lineage` facet.
type wireJobLineage struct {
	Entries *[]wireLineageEntry `json:"entries"`
}

type wireLineageEntry struct {
	Type      string                    `json:"type"`
	Namespace string                    `json:"namespace"`
	Name      string                    `json:"name"`
	RunID     string                    `json:"runId"`
	Inputs    []wireLineageInput        `json:"inputs"`
	Fields    map[string]wireFieldEntry `json:"fields"`
}

func (e *wireLineageEntry) check(sub string) *problem {
	var target *problem
	switch e.Type {
	case EntityDataset:
		target = firstProblem(need(sub, "namespace", e.Namespace), need(sub, "name", e.Name))
	case EntityJob:
		target = checkJobRef(sub, e.Namespace, e.Name, e.RunID)
	default:
		return bad(join(sub, "type"), RuleEnum, "%s must be DATASET or JOB, got %q", join(sub, "type"), truncate(e.Type))
	}
	return firstProblem(target, checkInputs(join(sub, "inputs"), e.Inputs), checkFieldEntries(join(sub, "fields"), e.Fields))
}

func checkJobLineage(l *wireJobLineage) *problem {
	if l.Entries == nil {
		return bad("entries", RuleRequired, "entries is required")
	}
	for i := range *l.Entries {
		if p := (*l.Entries)[i].check(idx("entries", i)); p != nil {
			return p
		}
	}
	return nil
}

func (l *wireJobLineage) entries() []LineageEntry {
	out := make([]LineageEntry, 0, len(*l.Entries))
	for _, e := range *l.Entries {
		out = append(out, LineageEntry{
			Type: e.Type, Namespace: e.Namespace, Name: e.Name, RunID: strings.ToLower(e.RunID),
			Inputs: inputs(e.Inputs), Fields: fieldInputs(e.Fields),
		})
	}
	return out
}
