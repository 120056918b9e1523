package project

import (
	"fmt"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestRecentEventsEvictsOldestFirst(t *testing.T) {
	c := newRecentEvents(3)
	job := &jobRec{Key: "j"}
	for i := range 5 {
		c.add([]*rec{{ID: fmt.Sprint("e", i), RunID: fmt.Sprint("r", i%2), Job: job}}, "t")
	}
	got := c.known([]string{graph.RunKey("r0", "j"), graph.RunKey("r1", "j")})
	if len(got) != 3 || got["e0"].r != nil || got["e1"].r != nil || got["e4"].r == nil {
		t.Fatalf("want e2..e4 remembered, got %v", got)
	}
	c.add([]*rec{{ID: "e4", RunID: "r0", Job: job}, {ID: "x"}}, "u") // a repeat and a rec without a run change nothing
	if got := c.known([]string{graph.RunKey("r0", "j")}); len(got) != 2 || got["e4"].tag != "t" {
		t.Fatalf("repeat or runless rec changed the cache: %v", got)
	}
}

// A run's earlier event is taken from memory only while its Event still carries the tag of the transaction that
// stored it; otherwise (another writer stored it) the payload is read from Neo4j.
func TestRecentEventsUsedOnlyWhileTheirTagMatches(t *testing.T) {
	s := newScen(t)
	in, out := s.ds("in"), s.ds("out")
	s.apply(s.runEv("start", olevent.TypeStart, 10, "job", "r1", []olevent.Dataset{in}, nil))
	known := s.p.recent.known([]string{s.runKey("job", "r1")})
	if len(known) != 1 {
		t.Fatalf("the committed START is not remembered: %v", known)
	}
	for _, k := range known {
		k.r.Time = s.ms(5) // tamper with the remembered copy: visible only if it is used
	}
	s.apply(s.runEv("complete", olevent.TypeComplete, 20, "job", "r1", nil, []olevent.Dataset{out}))
	if got := s.run("r1")["startedAt"]; got != s.ms(5) {
		t.Fatalf("remembered START not used: startedAt %v, want %v", got, s.ms(5))
	}

	s.apply(s.runEv("start2", olevent.TypeStart, 30, "job", "r2", []olevent.Dataset{in}, nil))
	for _, k := range s.p.recent.known([]string{s.runKey("job", "r2")}) {
		k.r.Time = s.ms(25)
	}
	s.query(`MATCH (e:Event {key: $k}) SET e.ptag = 'another-writer'`, map[string]any{"k": s.evKey("start2")})
	s.apply(s.runEv("complete2", olevent.TypeComplete, 40, "job", "r2", nil, []olevent.Dataset{out}))
	if got := s.run("r2")["startedAt"]; got != s.ms(30) {
		t.Fatalf("a payload stored by another writer was not read from Neo4j: startedAt %v, want %v", got, s.ms(30))
	}
}
