// Package ordered holds the one helper for visiting a map in a fixed order: its keys, sorted. Standard library
// only, so any package may use it (ingest/olevent and ingest/normalize stay leaves and call slices.Sorted(maps.Keys)
// directly).
package ordered

import (
	"cmp"
	"slices"
)

// Keys returns the keys of m in ascending order; an empty map gives an empty, non-nil slice (callers pass it on
// as a Cypher list parameter, where nil would be null).
func Keys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
