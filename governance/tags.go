package governance

import "strings"

// Tag is one stored tag of a dataset (graph model: `tags` rendered `key`, `key=value`, or `field:key[=value]` for
// a field's tag) split into its parts. Its class is its key, lower case.
type Tag struct {
	Field string // "" for a dataset-level tag
	Class string
	Value string
	Raw   string
}

// ParseTag splits one stored tag. A field path may itself hold ':'; the key never does (the OpenLineage tag keys
// the projector keeps are identifiers), so the last ':' before any '=' separates field and key.
func ParseTag(raw string) Tag {
	t := Tag{Raw: raw}
	head, value, _ := strings.Cut(raw, "=")
	t.Value = value
	if i := strings.LastIndexByte(head, ':'); i >= 0 {
		t.Field, head = head[:i], head[i+1:]
	}
	t.Class = CanonicalClass(head)
	return t
}

// CanonicalClass is a class name as compared: trimmed, lower case.
func CanonicalClass(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Within reports whether class is c or a class below it in the dotted hierarchy (`pii.email` is within `pii`,
// `piiX` is not).
func Within(class, c string) bool {
	return class == c || strings.HasPrefix(class, c+".")
}

// Ancestors lists a class and every class above it, nearest first (`pii.email.work`, `pii.email`, `pii`).
func Ancestors(class string) []string {
	out := []string{class}
	for i := strings.LastIndexByte(class, '.'); i > 0; i = strings.LastIndexByte(class, '.') {
		class = class[:i]
		out = append(out, class)
	}
	return out
}

// FieldTags returns, per field path, the tags of dataset tags within class: a field's own tags, and the
// dataset-level ones (which apply to every field) under the key "" .
func FieldTags(tags []string, class string) map[string][]Tag {
	out := map[string][]Tag{}
	for _, raw := range tags {
		t := ParseTag(raw)
		if Within(t.Class, class) {
			out[t.Field] = append(out[t.Field], t)
		}
	}
	return out
}
