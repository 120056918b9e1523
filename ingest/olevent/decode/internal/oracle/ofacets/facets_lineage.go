package ofacets

import (
	"maps"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
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
		case olevent.TransformDirect, olevent.TransformIndirect:
		default:
			p := JoinPath(sub, idx("transformations", i)) + ".type"
			return bad(p, olevent.RuleEnum, "%s must be DIRECT or INDIRECT, got %q", p, Truncate(t.Type))
		}
	}
	return nil
}

func transformations(ts []wireTransformation) []olevent.Transformation {
	if len(ts) == 0 {
		return nil
	}
	out := make([]olevent.Transformation, 0, len(ts))
	for _, t := range ts {
		out = append(out, olevent.Transformation{
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
	case olevent.EntityDataset:
		return firstProblem(need(sub, "namespace", in.Namespace), need(sub, "name", in.Name),
			checkTransformations(sub, in.Transformations))
	case olevent.EntityJob:
		return firstProblem(checkJobRef(sub, in.Namespace, in.Name, in.RunID), checkTransformations(sub, in.Transformations))
	}
	return bad(JoinPath(sub, "type"), olevent.RuleEnum, "%s must be DATASET or JOB, got %q", JoinPath(sub, "type"), Truncate(in.Type))
}

// checkJobRef: a job reference names both namespace and name, or neither (the event's own job).
func checkJobRef(sub, ns, name, runID string) *problem {
	if (ns == "") != (name == "") {
		return bad(sub, olevent.RuleRequired, "%s must give both namespace and name, or neither", sub)
	}
	if runID != "" {
		return needUUID(JoinPath(sub, "runId"), runID)
	}
	return nil
}

func (in *wireLineageInput) input() olevent.LineageInput {
	return olevent.LineageInput{
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

func inputs(ins []wireLineageInput) []olevent.LineageInput {
	out := make([]olevent.LineageInput, 0, len(ins))
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
		if p := checkInputs(JoinPath(JoinPath(sub, k), "inputs"), fields[k].Inputs); p != nil {
			return p
		}
	}
	return nil
}

func fieldInputs(fields map[string]wireFieldEntry) map[string][]olevent.LineageInput {
	if fields == nil {
		return nil
	}
	out := make(map[string][]olevent.LineageInput, len(fields))
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

func (l *wireDatasetLineage) facet() *olevent.LineageFacet {
	f := &olevent.LineageFacet{AllInputs: inputs(l.Inputs)}
	for _, in := range f.AllInputs {
		if in.Type == olevent.EntityDataset {
			f.Inputs = append(f.Inputs, olevent.Identifier{Namespace: in.Namespace, Name: in.Name, Type: olevent.EntityDataset})
		}
	}
	if l.Fields != nil {
		f.Fields = make(map[string][]olevent.InputField, len(l.Fields))
		for k, fe := range l.Fields {
			f.Fields[k] = datasetFieldInputs(fe.Inputs)
		}
	}
	return f
}

// datasetFieldInputs keeps the DATASET sources of a field entry as column-lineage inputs.
func datasetFieldInputs(ins []wireLineageInput) []olevent.InputField {
	out := make([]olevent.InputField, 0, len(ins))
	for _, in := range ins {
		if in.Type == olevent.EntityDataset {
			out = append(out, olevent.InputField{Namespace: in.Namespace, Name: in.Name, Field: in.Field,
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
	case olevent.EntityDataset:
		target = firstProblem(need(sub, "namespace", e.Namespace), need(sub, "name", e.Name))
	case olevent.EntityJob:
		target = checkJobRef(sub, e.Namespace, e.Name, e.RunID)
	default:
		return bad(JoinPath(sub, "type"), olevent.RuleEnum, "%s must be DATASET or JOB, got %q", JoinPath(sub, "type"), Truncate(e.Type))
	}
	return firstProblem(target, checkInputs(JoinPath(sub, "inputs"), e.Inputs), checkFieldEntries(JoinPath(sub, "fields"), e.Fields))
}

func checkJobLineage(l *wireJobLineage) *problem {
	if l.Entries == nil {
		return bad("entries", olevent.RuleRequired, "entries is required")
	}
	for i := range *l.Entries {
		if p := (*l.Entries)[i].check(idx("entries", i)); p != nil {
			return p
		}
	}
	return nil
}

func (l *wireJobLineage) entries() []olevent.LineageEntry {
	out := make([]olevent.LineageEntry, 0, len(*l.Entries))
	for _, e := range *l.Entries {
		out = append(out, olevent.LineageEntry{
			Type: e.Type, Namespace: e.Namespace, Name: e.Name, RunID: strings.ToLower(e.RunID),
			Inputs: inputs(e.Inputs), Fields: fieldInputs(e.Fields),
		})
	}
	return out
}
