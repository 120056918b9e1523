package project

import (
	"math/rand/v2"
	"testing"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// colMap builds a column-lineage facet: out field -> "dataset.field" sources (DIRECT IDENTITY).
func (s *scen) colMap(pairs map[string][]string) *olevent.ColumnLineage {
	cl := &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{}}
	for out, ins := range pairs {
		for _, in := range ins {
			ds, f := splitDot(in)
			cl.Fields[out] = append(cl.Fields[out], olevent.InputField{Namespace: s.dsNS(), Name: ds, Field: f,
				Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}})
		}
	}
	return cl
}

func splitDot(s string) (string, string) {
	for i := range s {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// colOut is an output dataset with column lineage and no schema (the fields exist only by being mentioned).
func (s *scen) colOut(name string, pairs map[string][]string) olevent.Dataset {
	d := s.ds(name)
	d.ColumnLineage = s.colMap(pairs)
	return d
}

// chainHistory is a chain a -> b -> c -> d of three jobs with column lineage and no run schemas, a DatasetEvent with
// b's schema before all of them, and declared field lineage from b into e: most fields exist because column lineage
// names them, as an input (observed on read) and, earlier or later, as an output.
// Issue 14 item 0: the field history a later run attached its column edge to must not be re-keyed away by an
// earlier observation that arrives after it.
func chainHistory(s *scen) []olevent.Event {
	a, b, c := s.ds("a"), s.ds("b"), s.ds("c")
	decl := s.ds("e")
	decl.Lineage = &olevent.LineageFacet{Inputs: []olevent.Identifier{{Namespace: s.dsNS(), Name: "b"}},
		Fields: s.colMap(map[string][]string{"x": {"b.amount"}}).Fields}
	return []olevent.Event{
		s.dsEv("bschema", 5, withSchema(s.ds("b"), "amount", "id")), // the earliest word on b: its owner's schema
		s.dsEv("edecl", 55, decl),                                   // declared lineage e.x <- b.amount
		s.runEv("ab1s", olevent.TypeStart, 10, "ab", "ab1", []olevent.Dataset{a}, nil),
		s.runEv("ab1c", olevent.TypeComplete, 20, "ab", "ab1", []olevent.Dataset{a},
			[]olevent.Dataset{s.colOut("b", map[string][]string{"amount": {"a.amount"}, "id": {"a.id"}})}),
		s.runEv("bc1s", olevent.TypeStart, 30, "bc", "bc1", []olevent.Dataset{b}, nil),
		s.runEv("bc1c", olevent.TypeComplete, 40, "bc", "bc1", []olevent.Dataset{b},
			[]olevent.Dataset{s.colOut("c", map[string][]string{"amount": {"b.amount"}})}),
		s.runEv("cd1s", olevent.TypeStart, 50, "cd", "cd1", []olevent.Dataset{c}, nil),
		s.runEv("cd1c", olevent.TypeComplete, 60, "cd", "cd1", []olevent.Dataset{c},
			[]olevent.Dataset{s.colOut("d", map[string][]string{"total": {"c.amount", "b.id"}})}),
		s.runEv("ab2s", olevent.TypeStart, 70, "ab", "ab2", []olevent.Dataset{a}, nil),
		s.runEv("ab2c", olevent.TypeComplete, 80, "ab", "ab2", []olevent.Dataset{a},
			[]olevent.Dataset{s.colOut("b", map[string][]string{"amount": {"a.amount"}, "id": {"a.id"}, "ts": {"a.ts"}})}),
		s.runEv("bc2s", olevent.TypeStart, 90, "bc", "bc2", []olevent.Dataset{b}, nil),
		s.runEv("bc2c", olevent.TypeComplete, 100, "bc", "bc2", []olevent.Dataset{b},
			[]olevent.Dataset{s.colOut("c", map[string][]string{"amount": {"b.amount"}, "ts": {"b.ts"}})}),
	}
}

// columnEdgeCount is the number of COLUMN_FEEDS into the scenario's datasets.
func (s *scen) columnEdgeCount() int64 {
	return s.one(`MATCH (d:Dataset)-[:HAS_FIELD]->(:Field)<-[c:COLUMN_FEEDS]-(:Field)
		WHERE d.namespace STARTS WITH $p RETURN count(c) AS n`, map[string]any{"p": s.ns})["n"].(int64)
}

func TestScenarioColumnEdgeSurvivesAnEarlierRunArrivingLater(t *testing.T) {
	s := newScen(t)
	evs := chainHistory(s)[2:6] // ab1 then bc1
	for _, e := range evs {
		s.apply(e)
	}
	want := s.dump()
	if n := s.columnEdgeCount(); n != 3 {
		t.Fatalf("in order: %d column edges, want 3 (b.amount, b.id, c.amount)\n%s", n, want)
	}
	s.wipe()
	s.apply(evs[2], evs[3]) // bc1 first: b.amount is first seen as an input field (observed on read)
	s.apply(evs[0], evs[1]) // then ab1, whose output b.amount starts earlier
	if got := s.dump(); got != want {
		t.Fatalf("out of order differs:\n%s", diffLines(want, got))
	}
}

func TestScenarioShuffledColumnChainGivesTheSameGraph(t *testing.T) {
	s := newScen(t)
	evs := chainHistory(s)
	for _, e := range evs {
		s.apply(e)
	}
	want := s.dump()
	if n := s.columnEdgeCount(); n != 8 {
		t.Fatalf("in order: %d column edges, want 8\n%s", n, want)
	}
	rng := rand.New(rand.NewPCG(14, 0))
	for round := range 10 {
		s.wipe()
		order := append([]olevent.Event(nil), evs...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		if round == 0 {
			for i := range order { // exactly reversed, one at a time
				order[i] = evs[len(evs)-1-i]
			}
		}
		for len(order) > 0 {
			n := 1 + rng.IntN(4)
			if round == 0 {
				n = 1
			}
			n = min(n, len(order))
			s.apply(order[:n]...)
			order = order[n:]
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d differs:\n%s", round, diffLines(want, got))
		}
	}
}

// Issue 14 item 3: an input named only by an output's column lineage (dbt-ol's seeds, Spark's Iceberg V2 appends
// with `inputs: []`) gets an OBSERVED INPUT_TO whose derivation says so; a run that lists it says "run"; a later
// COMPLETE run that names it nowhere closes it. The run's own inputs stay what it reported.
func TestScenarioColumnLineageImpliesTheInputEdge(t *testing.T) {
	s := newScen(t)
	out := func(pairs map[string][]string) []olevent.Dataset { return []olevent.Dataset{s.colOut("stg", pairs)} }
	s.apply(
		s.runEv("r1s", olevent.TypeStart, 10, "model", "r1", []olevent.Dataset{s.ds("src")}, nil),
		s.runEv("r1c", olevent.TypeComplete, 20, "model", "r1", nil,
			out(map[string][]string{"id": {"seed.id"}, "name": {"src.name"}})),
	)
	seed := s.edge("in", "model", s.dsKey("seed"), "OBSERVED")
	if seed == nil || seed["derivation"] != "columnLineage" || s.intervals(seed) != "[20,open)PUBLISHED" {
		t.Fatalf("the seed's input edge: %v %s", seed, s.intervals(seed))
	}
	if src := s.edge("in", "model", s.dsKey("src"), "OBSERVED"); src == nil || src["derivation"] != "run" {
		t.Fatalf("the declared input's edge: %v", src)
	}
	if n := s.one(`MATCH (r:Run {key: $k})-[:READ]->(d:Dataset) RETURN count(d) AS n`,
		map[string]any{"k": s.runKey("model", "r1")})["n"]; n != int64(1) {
		t.Fatalf("the run's inputs are what it reported (src only): %v", n)
	}
	// A run that lists the seed among its inputs: the latest evidence is the run's own.
	s.apply(
		s.runEv("r2s", olevent.TypeStart, 30, "model", "r2", []olevent.Dataset{s.ds("src"), s.ds("seed")}, nil),
		s.runEv("r2c", olevent.TypeComplete, 40, "model", "r2", nil, out(map[string][]string{"id": {"seed.id"}})),
	)
	if e := s.edge("in", "model", s.dsKey("seed"), "OBSERVED"); e["derivation"] != "run" || s.intervals(e) != "[20,open)PUBLISHED" {
		t.Fatalf("after a run that lists the seed: %v %s", e, s.intervals(e))
	}
	// A COMPLETE run whose column lineage no longer names the seed, nor its inputs: the edge closes.
	s.apply(
		s.runEv("r3s", olevent.TypeStart, 50, "model", "r3", []olevent.Dataset{s.ds("src")}, nil),
		s.runEv("r3c", olevent.TypeComplete, 60, "model", "r3", nil, out(map[string][]string{"name": {"src.name"}})),
	)
	if e := s.edge("in", "model", s.dsKey("seed"), "OBSERVED"); s.intervals(e) != "[20,60)PUBLISHED" {
		t.Fatalf("after a run that does not name the seed: %s", s.intervals(e))
	}
	// The same in any order, in any batches.
	want := s.dump()
	s.wipe()
	s.apply(s.runEv("r3c", olevent.TypeComplete, 60, "model", "r3", nil, out(map[string][]string{"name": {"src.name"}})))
	s.apply(s.runEv("r1c", olevent.TypeComplete, 20, "model", "r1", nil,
		out(map[string][]string{"id": {"seed.id"}, "name": {"src.name"}})),
		s.runEv("r2s", olevent.TypeStart, 30, "model", "r2", []olevent.Dataset{s.ds("src"), s.ds("seed")}, nil))
	s.apply(s.runEv("r2c", olevent.TypeComplete, 40, "model", "r2", nil, out(map[string][]string{"id": {"seed.id"}})),
		s.runEv("r3s", olevent.TypeStart, 50, "model", "r3", []olevent.Dataset{s.ds("src")}, nil))
	s.apply(s.runEv("r1s", olevent.TypeStart, 10, "model", "r1", []olevent.Dataset{s.ds("src")}, nil))
	if got := s.dump(); got != want {
		t.Fatalf("out of order differs:\n%s", diffLines(want, got))
	}
}
