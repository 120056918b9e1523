package ordered

import (
	"slices"
	"testing"
)

func TestKeysAreSortedAndNeverNil(t *testing.T) {
	cases := []struct {
		in   map[string]int
		want []string
	}{
		{nil, []string{}},
		{map[string]int{}, []string{}},
		{map[string]int{"b": 1, "a": 2, "B": 3, "": 4}, []string{"", "B", "a", "b"}},
	}
	for _, c := range cases {
		got := Keys(c.in)
		if got == nil || !slices.Equal(got, c.want) {
			t.Errorf("Keys(%v) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestPermutationsGivesEveryOrderOnce(t *testing.T) {
	in := []int{1, 2, 3}
	seen := map[[3]int]bool{}
	Permutations(in, func(p []int) {
		q := [3]int(p)
		if s := slices.Sorted(slices.Values(p)); !slices.Equal(s, in) {
			t.Fatalf("%v is not an order of %v", p, in)
		}
		seen[q] = true
		p[0] = 0 // fn may change its slice: the next orders do not see it
	})
	if len(seen) != 6 || !slices.Equal(in, []int{1, 2, 3}) {
		t.Fatalf("%d distinct orders (want 6), input now %v", len(seen), in)
	}
}
