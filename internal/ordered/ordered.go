// Package ordered holds the helpers for visiting things in a fixed order: a map by its keys, sorted (Keys), and a
// slice in every order (Permutations, for tests that a result does not depend on arrival order). Standard library
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

// Permutations calls fn with every ordering of s (a fresh slice each time), in a fixed sequence; s is not changed.
func Permutations[T any](s []T, fn func([]T)) {
	a := slices.Clone(s)
	var step func(int)
	step = func(k int) {
		if k == len(a) {
			fn(slices.Clone(a))
			return
		}
		for i := k; i < len(a); i++ {
			a[k], a[i] = a[i], a[k]
			step(k + 1)
			a[k], a[i] = a[i], a[k]
		}
	}
	step(0)
}
