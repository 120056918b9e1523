package graph

import "strings"

// Interval is one validity interval of a lineage relationship as stored: [From, To) in epoch milliseconds
// (To = OpenEnd while current), with the publication state of that stretch. This is the one codec of the stored
// temporal model: the projector derives intervals (ingest/fold/intervals.go) and stores them with
// IntervalProps, the benchmark history loader writes the same properties, a hop reads them back (Rel.Intervals)
// and selects the one in force at a time with InForce in Go or InForceCypher in Cypher, the same predicate
// (TestIntervalPredicatesAgree runs both on one table of cases).
type Interval struct {
	From, To int64
	Pub      string
}

// Stored property names of a relationship's intervals (docs/graph-model.md, "Lineage edges").
const (
	propFroms   = "froms"   // []int64: interval starts, sorted
	propTos     = "tos"     // []int64: interval ends, parallel to froms; OpenEnd while current
	propPubs    = "pubs"    // []string: publication state of each interval, parallel to froms
	propValidTo = "validTo" // int64: max(tos), so a query skips closed relationships with one comparison
)

// IntervalProps is the stored form of intervals: the parallel arrays froms, tos and pubs and validTo (the latest
// end; 0 when there is none).
func IntervalProps(ivs []Interval) map[string]any {
	froms, tos, pubs := make([]any, len(ivs)), make([]any, len(ivs)), make([]any, len(ivs))
	var validTo int64
	for i, iv := range ivs {
		froms[i], tos[i], pubs[i] = iv.From, iv.To, iv.Pub
		validTo = max(validTo, iv.To)
	}
	return map[string]any{propFroms: froms, propTos: tos, propPubs: pubs, propValidTo: validTo}
}

// Intervals decodes the relationship's stored intervals; an index missing from one of the parallel arrays is no
// interval (the Cypher predicate reads it as null, never true).
func (r *Rel) Intervals() []Interval {
	n := min(len(r.Froms), len(r.Tos), len(r.Pubs))
	out := make([]Interval, n)
	for i := range n {
		out[i] = Interval{From: r.Froms[i], To: r.Tos[i], Pub: r.Pubs[i]}
	}
	return out
}

// InForce returns the first interval with From <= t < To whose publication counts: the Go form of InForceCypher.
func InForce(ivs []Interval, t int64, pubs map[string]bool) (Interval, bool) {
	for _, iv := range ivs {
		if iv.From <= t && t < iv.To && pubs[iv.Pub] {
			return iv, true
		}
	}
	return Interval{}, false
}

// inForce is the Cypher form of InForce over relationship (or map) %[1]s, at $t, for the publication states
// $pubs. Queries put `%[1]s.validTo > $t AND` in front of it: implied by it, and answered from an index.
const inForce = `any(i IN range(0, size(%[1]s.froms)-1) WHERE %[1]s.froms[i] <= $t AND $t < %[1]s.tos[i] AND %[1]s.pubs[i] IN $pubs)`

func InForceCypher(v string) string { return strings.ReplaceAll(inForce, "%[1]s", v) }
