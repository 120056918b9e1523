package project

import (
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// blocked is d with a headwater_governance_block facet listing bs (none: it removes every block).
func blocked(d olevent.Dataset, bs ...olevent.Block) olevent.Dataset {
	d.Blocks = append([]olevent.Block{}, bs...)
	return d
}

// blockRow reads a dataset's block history as the readers do.
func (s *scen) blockRow(name string) graph.DatasetRow {
	s.t.Helper()
	r := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.blockHistory AS h`, map[string]any{"k": s.dsKey(name)})
	return graph.DatasetRow{BlockHistory: graph.ParseBlockHistory(asStr(r["h"]))}
}

// Explicit blocks are temporal (projection version 7, ADR 0067): a field block added at 20 s and removed at 40 s
// (the next facet lists only the edge block) is in force in [20 s, 40 s) with who sent it (the event's principal,
// not the facet's claim) and why; the edge block, canonicalised, from 20 s on; an empty facet at 60 s removes it.
// The history is the same in whatever order the facets arrive, and after a replay of them all; and a block facet
// on a dataset the sender does not own (an input of its run) is ignored as its tags are.
func TestScenarioBlocksAreTemporal(t *testing.T) {
	s := newScen(t)
	fieldBlock := olevent.Block{Field: "email", By: "someone-else", Reason: "masked downstream"}
	edgeBlock := olevent.Block{Field: "email_domain", Reason: "not really derived", Edge: &olevent.BlockEdge{
		JobNamespace: s.jobNS(), JobName: "stage", From: olevent.InputField{Namespace: s.dsNS(), Name: "customers", Field: "email"}}}
	evs := []olevent.Event{
		s.dsEv("b1", 10, withSchema(s.ds("stage"), "email", "email_domain")),
		s.dsEv("b2", 20, blocked(s.ds("stage"), fieldBlock, edgeBlock)),
		s.dsEv("b3", 40, blocked(s.ds("stage"), edgeBlock)),
		s.dsEv("b4", 60, blocked(s.ds("stage"))),
	}
	check := func(label string) string {
		t.Helper()
		row := s.blockRow("stage")
		want := map[int]int{5: 0, 20: 2, 39: 2, 40: 1, 59: 1, 60: 0}
		for sec, n := range want {
			if got := row.BlocksAt(s.ms(sec)); len(got) != n {
				t.Errorf("%s: blocks at %d s = %+v, want %d", label, sec, got, n)
			}
		}
		at := row.BlocksAt(s.ms(30))
		if len(at) != 2 || at[0].Field != "email" || at[0].By != testPrincipal || at[0].Reason != "masked downstream" ||
			at[0].ValidFrom != s.ms(20) || at[0].ValidTo != s.ms(40) || at[0].EventID != s.ns+"-b2" {
			t.Errorf("%s: field block %+v", label, at)
		}
		if len(at) == 2 && (at[1].Edge == nil || at[1].Edge.JobKey != s.jobKey("stage") || at[1].Edge.Field != "email" ||
			at[1].Edge.Name != "customers" || at[1].ValidTo != s.ms(60)) {
			t.Errorf("%s: edge block %+v %+v", label, at[1], at[1].Edge)
		}
		return s.dump()
	}
	s.apply(evs...)
	want := check("in order")

	s.wipe()
	s.p = newScen(t).p // a new process: nothing in memory
	s.apply(evs[3], evs[1])
	s.apply(evs[0], evs[2])
	if got := check("shuffled"); got != want {
		t.Fatalf("the block history depends on arrival order:\n%s", diffLines(want, got))
	}
	s.p = newScen(t).p
	s.apply(evs...) // a replay: every facet once
	if got := check("replayed"); got != want {
		t.Fatalf("a replay changed the graph:\n%s", diffLines(want, got))
	}

	// a run reading stage with a block facet on it, from a producer owning only its job namespace
	in := blocked(s.ds("stage"), olevent.Block{Field: "email_domain", Reason: "a reader's claim"})
	s.applyOwned(owned{ev: s.runEv("r1", olevent.TypeComplete, 70, "reader", "x", []olevent.Dataset{in}, nil),
		set: ownership.Of([]string{s.jobNS()})})
	if got := s.blockRow("stage").BlocksAt(s.ms(80)); len(got) != 0 {
		t.Fatalf("a reader's block facet was applied: %+v", got)
	}
}
