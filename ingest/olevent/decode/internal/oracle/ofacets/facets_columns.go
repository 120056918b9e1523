package ofacets

import (
	"maps"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// Legacy (pre-1.x) column-lineage transformationType values (they map to olevent.SubtypeIdentity and
// olevent.SubtypeTransformation).
const (
	legacyIdentity = "IDENTITY"
	legacyMasked   = "MASKED"
)

type wireInputField struct {
	Namespace       string               `json:"namespace"`
	Name            string               `json:"name"`
	Field           string               `json:"field"`
	Transformations []wireTransformation `json:"transformations"`
}

func (f *wireInputField) check(sub string) *problem {
	return firstProblem(need(sub, "namespace", f.Namespace), need(sub, "name", f.Name), need(sub, "field", f.Field),
		checkTransformations(sub, f.Transformations))
}

type wireColumnEntry struct {
	InputFields               []wireInputField `json:"inputFields"`
	TransformationType        string           `json:"transformationType"`
	TransformationDescription string           `json:"transformationDescription"`
}

type wireColumnLineage struct {
	Fields  map[string]wireColumnEntry `json:"fields"`
	Dataset []wireInputField           `json:"dataset"`
}

func checkColumnLineage(c *wireColumnLineage) *problem {
	for _, k := range slices.Sorted(maps.Keys(c.Fields)) {
		for i := range c.Fields[k].InputFields {
			if p := c.Fields[k].InputFields[i].check(idx(JoinPath(JoinPath("fields", k), "inputFields"), i)); p != nil {
				return p
			}
		}
	}
	for i := range c.Dataset {
		if p := c.Dataset[i].check(idx("dataset", i)); p != nil {
			return p
		}
	}
	return nil
}

func (c *wireColumnLineage) lineage() *olevent.ColumnLineage {
	cl := &olevent.ColumnLineage{Fields: make(map[string][]olevent.InputField, len(c.Fields))}
	for k, e := range c.Fields {
		legacy := legacyTransformation(e.TransformationType, e.TransformationDescription)
		ins := make([]olevent.InputField, 0, len(e.InputFields))
		for _, in := range e.InputFields {
			ins = append(ins, inputField(in, legacy))
		}
		cl.Fields[k] = ins
	}
	for _, in := range c.Dataset {
		cl.Dataset = append(cl.Dataset, inputField(in, nil))
	}
	return cl
}

// inputField converts one input; the legacy per-output transformation applies only to inputs that carry no
// transformations of their own.
func inputField(in wireInputField, legacy []olevent.Transformation) olevent.InputField {
	ts := transformations(in.Transformations)
	if ts == nil && legacy != nil {
		ts = append([]olevent.Transformation(nil), legacy...)
	}
	return olevent.InputField{Namespace: in.Namespace, Name: in.Name, Field: in.Field, Transformations: ts}
}

// legacyTransformation maps the deprecated transformationType/transformationDescription pair:
// IDENTITY -> DIRECT/IDENTITY; MASKED -> DIRECT/TRANSFORMATION with masking; any other non-empty value ->
// DIRECT/TRANSFORMATION (the value kept in the description when no description was sent). Both empty -> none.
func legacyTransformation(typ, desc string) []olevent.Transformation {
	t := olevent.Transformation{Type: olevent.TransformDirect, Description: desc}
	switch strings.ToUpper(typ) {
	case "":
		if desc == "" {
			return nil
		}
		t.Subtype = olevent.SubtypeTransformation
	case legacyIdentity:
		t.Subtype = olevent.SubtypeIdentity
	case legacyMasked:
		t.Subtype, t.Masking = olevent.SubtypeTransformation, true
	default:
		t.Subtype = olevent.SubtypeTransformation
		if t.Description == "" {
			t.Description = typ
		}
	}
	return []olevent.Transformation{t}
}
