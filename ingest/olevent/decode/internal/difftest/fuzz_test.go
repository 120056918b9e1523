package difftest

import (
	"testing"
)

// FuzzDecodeMatchesReference: on any input, under the default and the tight limits, the single pass and the
// reference decoder accept and refuse alike, with the same field and rule, and decode accepted events alike.
// Seeds: the decoder's fixtures, the reference examples and a slice of the generator's events.
func FuzzDecodeMatchesReference(f *testing.F) {
	for i, s := range corpus(f) {
		if i%3 == 0 || len(s.Raw) < 2048 {
			f.Add(s.Raw)
		}
	}
	pairs := newPairs(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, p := range pairs {
			if d := p.diff(raw); d != "" {
				t.Fatalf("%s limits: %s\n input %q", p.name, d, clip(raw))
			}
		}
	})
}
