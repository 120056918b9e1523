package fold

// Neo4j-shaped property values: lists of any, and the int64 and string a stored value decodes to.

func toAny[T any](in []T) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func asStr(v any) string {
	s, _ := v.(string)
	return s
}

// compactStrings drops consecutive duplicates of a sorted list, in place.
func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
