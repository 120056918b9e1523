package api

import (
	"slices"
	"strings"
)

// TransformationKind is an OpenLineage transformation type with an optional subtype (DIRECT, INDIRECT/FILTER).
type TransformationKind struct {
	Type    TransformationType
	Subtype *string
}

// TransformationFilter says which column edges a FIELD lineage walk crosses, by their transformations (ADR 0055).
// An edge is judged by its transformations minus the excluded kinds, minus the masking ones with StopAtMasking;
// with Only, what remains must hold one of its kinds. An edge is crossed when something remains, or when it
// reported no transformations at all and Only is not given (nothing says it is of an excluded kind).
type TransformationFilter struct {
	Only          []TransformationKind
	Exclude       []TransformationKind
	StopAtMasking *bool
}

// Matches says t is of kind k (type equal; subtype equal, case-insensitive, when k names one).
func (k TransformationKind) Matches(t Transformation) bool {
	if !strings.EqualFold(string(k.Type), string(t.Type)) {
		return false
	}
	return k.Subtype == nil || (t.Subtype != nil && strings.EqualFold(*k.Subtype, *t.Subtype))
}

// Empty says the filter lets every edge through.
func (f *TransformationFilter) Empty() bool {
	return f == nil || (len(f.Only) == 0 && len(f.Exclude) == 0 && (f.StopAtMasking == nil || !*f.StopAtMasking))
}

// Keeps says a column edge with these transformations is crossed.
func (f *TransformationFilter) Keeps(ts []Transformation) bool {
	if f.Empty() {
		return true
	}
	if len(ts) == 0 {
		return len(f.Only) == 0
	}
	mask := f.StopAtMasking != nil && *f.StopAtMasking
	for _, t := range ts {
		excluded := slices.ContainsFunc(f.Exclude, func(k TransformationKind) bool { return k.Matches(t) })
		if excluded || (mask && t.Masking) {
			continue
		}
		if len(f.Only) == 0 || slices.ContainsFunc(f.Only, func(k TransformationKind) bool { return k.Matches(t) }) {
			return true
		}
	}
	return false
}

// Canonical is the filter as a cache key and cursor digest part: kinds upper case and sorted, "" when empty.
func (f *TransformationFilter) Canonical() string {
	if f.Empty() {
		return ""
	}
	kinds := func(ks []TransformationKind) string {
		out := make([]string, len(ks))
		for i, k := range ks {
			out[i] = strings.ToUpper(string(k.Type))
			if k.Subtype != nil {
				out[i] += "/" + strings.ToUpper(*k.Subtype)
			}
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), ",")
	}
	return "only=" + kinds(f.Only) + ";exclude=" + kinds(f.Exclude) + ";mask=" + map[bool]string{true: "stop", false: "cross"}[f.StopAtMasking != nil && *f.StopAtMasking]
}
