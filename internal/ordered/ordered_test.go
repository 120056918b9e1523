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
