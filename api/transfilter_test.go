package api

import "testing"

func TestTransformationFilterKeeps(t *testing.T) {
	sub := func(s string) *string { return &s }
	tr := func(typ, s string, mask bool) Transformation {
		return Transformation{Type: TransformationType(typ), Subtype: sub(s), Masking: mask}
	}
	yes := true
	direct := []TransformationKind{{Type: "DIRECT"}}
	filter := []TransformationKind{{Type: "INDIRECT", Subtype: sub("filter")}}
	caseWhen := []Transformation{tr("DIRECT", "TRANSFORMATION", false), tr("INDIRECT", "CONDITIONAL", false)}
	for _, c := range []struct {
		name string
		f    *TransformationFilter
		ts   []Transformation
		want bool
	}{
		{"nil keeps all", nil, caseWhen, true},
		{"only DIRECT keeps case-when", &TransformationFilter{Only: direct}, caseWhen, true},
		{"only DIRECT drops a filter", &TransformationFilter{Only: direct}, []Transformation{tr("INDIRECT", "FILTER", false)}, false},
		{"only drops an edge with none reported", &TransformationFilter{Only: direct}, nil, false},
		{"exclude keeps an edge with none reported", &TransformationFilter{Exclude: filter}, nil, true},
		{"exclude FILTER (any case) drops a filter", &TransformationFilter{Exclude: filter}, []Transformation{tr("INDIRECT", "FILTER", false)}, false},
		{"exclude FILTER keeps identity + filter", &TransformationFilter{Exclude: filter},
			[]Transformation{tr("DIRECT", "IDENTITY", false), tr("INDIRECT", "FILTER", false)}, true},
		{"stopAtMasking drops a hash", &TransformationFilter{StopAtMasking: &yes}, []Transformation{tr("DIRECT", "TRANSFORMATION", true)}, false},
		{"stopAtMasking keeps identity beside a hash", &TransformationFilter{StopAtMasking: &yes},
			[]Transformation{tr("DIRECT", "TRANSFORMATION", true), tr("DIRECT", "IDENTITY", false)}, true},
	} {
		if got := c.f.Keeps(c.ts); got != c.want {
			t.Errorf("%s: Keeps = %v, want %v", c.name, got, c.want)
		}
	}
	a := &TransformationFilter{Only: []TransformationKind{{Type: "DIRECT", Subtype: sub("identity")}, {Type: "DIRECT"}}}
	b := &TransformationFilter{Only: []TransformationKind{{Type: "DIRECT"}, {Type: "DIRECT", Subtype: sub("IDENTITY")}}}
	if a.Canonical() != b.Canonical() || a.Canonical() == (&TransformationFilter{Only: direct}).Canonical() || (&TransformationFilter{}).Canonical() != "" {
		t.Errorf("Canonical: %q %q", a.Canonical(), b.Canonical())
	}
}
