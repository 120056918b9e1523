package cache

import (
	"strings"
	"testing"
)

// TestEntryEncoding: generations and value round-trip; the value comes back byte for byte (unscanned, even with
// newlines escaped inside its strings); anything without the separator or with broken generations is a miss.
func TestEntryEncoding(t *testing.T) {
	value := []byte(`{"a":"line\nbreak","n":[1,2]}`)
	b, err := encodeEntry(map[string]int64{"k": 3, EpochKey: 1}, value)
	if err != nil {
		t.Fatal(err)
	}
	e := decodeEntry(string(b))
	if e == nil || e.Gens["k"] != 3 || e.Gens[EpochKey] != 1 || string(e.Value) != string(value) {
		t.Fatalf("round trip: %+v", e)
	}
	for _, bad := range []string{`{"g":{"k":1},"v":{}}`, "not json\n{}", "\n{}", strings.Repeat("x", 10)} {
		if e := decodeEntry(bad); e != nil && len(e.Gens) > 0 {
			t.Errorf("%q decoded as %+v, want a miss", bad, e)
		}
	}
}
