package fold

import (
	"strconv"
	"testing"
)

// Spark writes the scanned snapshot as a JSON double; the one recorded id that rounds to it is the snapshot.
// Measured on the real stack (ADR 0065 amendment, session h18e): S1 8175655899474428532 was reported as
// 8.1756558994744289E18.
func TestMatchScanSnapshot(t *testing.T) {
	const s1, s2 = "8175655899474428532", "3671928165965023760"
	// ids above 2^53 that share one float64: 2^62 and 2^62+1 both round to 4.611686018427388E18
	const big, bigNext = "4611686018427387904", "4611686018427387905"
	for _, tt := range []struct {
		name, scan string
		recorded   []string
		want, how  string
	}{
		{"one candidate, the measured Spark double", "8.1756558994744289E18", []string{s2, s1}, s1, ScanMatched},
		{"one candidate, Go's shortest form", strconv.FormatFloat(8175655899474428532, 'g', -1, 64), []string{s1, s2}, s1, ScanMatched},
		{"no candidate: snapshot not recorded yet", "8.1756558994744289E18", []string{s2}, "", ScanUnmatched},
		{"no candidate: nothing recorded", "8.1756558994744289E18", nil, "", ScanUnmatched},
		{"two candidates above 2^53", "4.611686018427388E18", []string{big, bigNext, s2}, "", ScanAmbiguous},
		{"the same id twice is one candidate", "8.1756558994744289E18", []string{s1, s1}, s1, ScanMatched},
		{"integer literal is exact", s1, []string{s1, s2}, s1, ScanMatched},
		{"integer literal never rounds", "8175655899474428500", []string{s1}, "", ScanUnmatched},
		{"integer literal above 2^53 picks its own id", bigNext, []string{big, bigNext}, bigNext, ScanMatched},
		{"small id as a double", "42.0", []string{"42", "43"}, "42", ScanMatched},
		{"negative id", "-1.0E0", []string{"-1", "1"}, "-1", ScanMatched},
		{"zero", "0.0", []string{"0"}, "0", ScanMatched},
		{"not a number", "S1", []string{s1}, "", ScanUnmatched},
		{"non-integer versions are never candidates", "1.5", []string{"1.5", "v2"}, "", ScanUnmatched},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, how := MatchScanSnapshot(tt.scan, tt.recorded)
			if got != tt.want || how != tt.how {
				t.Fatalf("MatchScanSnapshot(%q, %v) = %q, %s; want %q, %s", tt.scan, tt.recorded, got, how, tt.want, tt.how)
			}
		})
	}
}
