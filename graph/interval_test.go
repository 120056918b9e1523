package graph_test

import (
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// The Go predicate (graph.InForce over Rel.Intervals) and the Cypher one the hop reads use (validTo > $t AND
// InForceCypher) agree on every case, run against the real Neo4j on the stored form graph.IntervalProps writes.
func TestIntervalPredicatesAgree(t *testing.T) {
	s := testenv.Store(t)
	const day = int64(86_400_000)
	pub, att, pend := graph.PubPublished, graph.PubAttempted, graph.PubPending
	published := []string{pub}
	withAttempted := []string{pub, att, pend}
	open := []graph.Interval{{From: 10 * day, To: graph.OpenEnd, Pub: pub}}
	gap := []graph.Interval{{From: 10 * day, To: 20 * day, Pub: pub}, {From: 30 * day, To: graph.OpenEnd, Pub: att}}
	cases := []struct {
		name string
		ivs  []graph.Interval
		t    int64
		pubs []string
		want bool
	}{
		{"no intervals", nil, 10 * day, published, false},
		{"open, inside", open, 15 * day, published, true},
		{"open, at its start", open, 10 * day, published, true},
		{"open, just before its start", open, 10*day - 1, published, false},
		{"open, at the last instant", open, graph.OpenEnd - 1, published, true},
		{"open, at OpenEnd", open, graph.OpenEnd, published, false},
		{"closed, at its end", gap, 20 * day, withAttempted, false},
		{"closed, just before its end", gap, 20*day - 1, published, true},
		{"in the gap", gap, 25 * day, withAttempted, false},
		{"second interval, attempted, published only", gap, 35 * day, published, false},
		{"second interval, attempted counted", gap, 35 * day, withAttempted, true},
		{"no publication counts", open, 15 * day, nil, false},
		{"withheld counts only when asked", []graph.Interval{{From: 0, To: day, Pub: graph.PubWithheld}}, 0,
			[]string{graph.PubWithheld}, true},
		{"touching intervals, at the seam", []graph.Interval{{From: 0, To: day, Pub: att}, {From: day, To: 2 * day, Pub: pub}},
			day, published, true},
	}
	cypher := `WITH $r AS r RETURN r.validTo > $t AND ` + graph.InForceCypherForTest("r") + ` AS withValidTo, ` +
		graph.InForceCypherForTest("r") + ` AS alone`
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			props := graph.IntervalProps(c.ivs)
			pubs := map[string]bool{}
			anyPubs := make([]any, len(c.pubs))
			for i, p := range c.pubs {
				pubs[p], anyPubs[i] = true, p
			}
			rel := graph.Rel{Froms: ints(props["froms"]), Tos: ints(props["tos"]),
				Pubs: strs(props["pubs"])}
			_, goSays := graph.InForce(rel.Intervals(), c.t, pubs)
			res, err := neo4j.ExecuteQuery(t.Context(), s.Driver, cypher, map[string]any{"r": props, "t": c.t,
				"pubs": anyPubs}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
			if err != nil {
				t.Fatal(err)
			}
			row := res.Records[0].AsMap()
			if goSays != c.want || row["withValidTo"] != c.want || row["alone"] != c.want {
				t.Fatalf("at %d with %v: want %v, Go %v, Cypher %v (without validTo %v)", c.t, c.pubs, c.want, goSays,
					row["withValidTo"], row["alone"])
			}
		})
	}
}

// The stored form round-trips: what IntervalProps writes, Rel.Intervals reads back.
func TestIntervalPropsRoundTrip(t *testing.T) {
	ivs := []graph.Interval{{From: 1, To: 5, Pub: graph.PubPublished}, {From: 7, To: graph.OpenEnd, Pub: graph.PubPending}}
	props := graph.IntervalProps(ivs)
	rel := graph.Rel{Froms: ints(props["froms"]), Tos: ints(props["tos"]), Pubs: strs(props["pubs"])}
	got := rel.Intervals()
	if len(got) != 2 || got[0] != ivs[0] || got[1] != ivs[1] || props["validTo"] != graph.OpenEnd {
		t.Fatalf("round trip: %+v, validTo %v", got, props["validTo"])
	}
	if got := graph.IntervalProps(nil)["validTo"]; got != int64(0) {
		t.Fatalf("validTo of no intervals = %v", got)
	}
}

func ints(v any) []int64 {
	var out []int64
	for _, x := range v.([]any) {
		out = append(out, x.(int64))
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
