package fold

import (
	"strconv"
	"strings"
)

// The snapshot a time-travel read scanned (docs/adr/0084-the-scanned-snapshot-of-a-time-travel-read.md). For
// `VERSION AS OF S` the OpenLineage Spark integration reports the table's CURRENT snapshot as the input's
// version.datasetVersion; the scanned snapshot is only in the input facet icebergScanReport.snapshotId, written
// as a JSON double (8.1756558994744289E18 for 8175655899474428532), which may have lost digits. It names a
// snapshot only through the table's recorded snapshot ids: the one id whose float64 rounding is that double.

// Scan match outcomes (RunIO.ScanMatch, READ.scanMatch).
const (
	// ScanMatched: exactly one recorded snapshot id matches the scan report; the read names it.
	ScanMatched = "MATCHED"
	// ScanUnmatched: no recorded snapshot id matches (the sync has not recorded it yet, or it is not this
	// table's): the read keeps the version the event reported.
	ScanUnmatched = "UNMATCHED"
	// ScanAmbiguous: several recorded snapshot ids round to the same double: the read keeps the reported version
	// rather than pick one.
	ScanAmbiguous = "AMBIGUOUS"
)

// MatchScanSnapshot finds the recorded snapshot ids (decimal text) that the scan report's snapshotId (its text as
// sent) names: an integer literal names the id equal to it; a literal with a fraction or an exponent names every
// id whose nearest float64 equals the literal's value (the rounding a JSON writer applied to the long). It
// returns the one match and ScanMatched, or "" and ScanUnmatched (none, or text that is not a number) or
// ScanAmbiguous (several). Ids that are not integers are never candidates.
func MatchScanSnapshot(scan string, recorded []string) (string, string) {
	scan = strings.TrimSpace(scan)
	var match string
	n := 0
	seen := map[string]bool{}
	if !strings.ContainsAny(scan, ".eE") {
		want, ok := parseID(scan)
		if !ok {
			return "", ScanUnmatched
		}
		for _, id := range recorded {
			if v, ok := parseID(id); ok && v == want && !seen[id] {
				seen[id], match = true, id
				n++
			}
		}
	} else {
		f, err := strconv.ParseFloat(scan, 64)
		if err != nil {
			return "", ScanUnmatched
		}
		for _, id := range recorded {
			if v, ok := parseID(id); ok && v.float() == f && !seen[id] {
				seen[id], match = true, id
				n++
			}
		}
	}
	switch n {
	case 0:
		return "", ScanUnmatched
	case 1:
		return match, ScanMatched
	}
	return "", ScanAmbiguous
}

// snapID is a snapshot id as a signed 64-bit integer (Iceberg's snapshot ids are Java longs); neg marks a
// negative one.
type snapID struct {
	neg bool
	abs uint64
}

func parseID(s string) (snapID, bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	u, err := strconv.ParseUint(strings.TrimPrefix(s, "-"), 10, 64)
	if err != nil || s == "" || s == "-" {
		return snapID{}, false
	}
	if neg && u == 0 {
		neg = false
	}
	return snapID{neg: neg, abs: u}, true
}

// float is the id's nearest float64 (round half to even, as Java's (double) cast and Go's conversion do).
func (v snapID) float() float64 {
	f := float64(v.abs)
	if v.neg {
		return -f
	}
	return f
}
