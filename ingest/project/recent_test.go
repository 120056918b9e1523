package project

import (
	"fmt"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestRecentEventsEvictsOldestFirst(t *testing.T) {
	job := &jobRec{Key: "j"}
	c := newRecentEvents(3 * (&rec{ID: "e0", RunID: "r0", Job: job}).size())
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

// rec.size, which the recent-events cache sums against its bound, is within a third of the heap a committed
// event keeps as the cache keeps it (decoded from its bytes as the consumer does, then built), on every fixture.
func TestRecentEventResidentSize(t *testing.T) {
	raws, dec, canon := decodedFixtures(t)
	const n = 300
	var estTotal, heapTotal, rawTotal float64
	for _, raw := range raws {
		var estimate float64
		measured := residentBytes(n, func(int) any {
			ev, err := dec.DecodeValidated(raw)
			if err != nil {
				t.Fatal(err)
			}
			olevent.ResolveID("", &ev)
			r, err := buildRec(Envelope{Event: ev, ReceivedAt: time.Now(), Source: "replay"}, canon)
			if err != nil {
				t.Fatal(err)
			}
			bindForTest(r)
			estimate += float64(r.size())
			return r
		})
		estimate /= n
		estTotal, heapTotal, rawTotal = estTotal+estimate, heapTotal+measured, rawTotal+float64(len(raw))
		if r := estimate / measured; r < 0.67 || r > 1.5 {
			t.Errorf("an event of %d B: size says %.0f B, the heap keeps %.0f B: not within a third", len(raw), estimate, measured)
		}
	}
	k := float64(len(raws))
	t.Logf("%d fixtures: mean event %.0f B, size %.0f B, resident %.0f B (%.2fx)", len(raws), rawTotal/k, estTotal/k,
		heapTotal/k, estTotal/heapTotal)
}

// The cache forgets its oldest events once their bytes pass the bound, and keeps none larger than the bound.
func TestRecentEventsBoundedByBytes(t *testing.T) {
	job := &jobRec{Key: "j"}
	ev := func(i int, src int) *rec { return &rec{ID: fmt.Sprint("e", i), RunID: "r", Job: job, src: src} }
	one := ev(0, 1000).size()
	c := newRecentEvents(3 * one)
	for i := range 3 {
		c.add([]*rec{ev(i, 1000)}, "t")
	}
	if n, b := c.held(); n != 3 || b != 3*one {
		t.Fatalf("three events within the bound: held %d, %d B (want 3, %d B)", n, b, 3*one)
	}
	c.add([]*rec{ev(3, 2000)}, "t") // 1,000 B more than one: the two oldest go
	got := c.known([]string{graph.RunKey("r", "j")})
	if len(got) != 2 || got["e0"].r != nil || got["e1"].r != nil || got["e2"].r == nil || got["e3"].r == nil {
		t.Fatalf("want e2 and e3 remembered, got %v", got)
	}
	if _, b := c.held(); b > 3*one {
		t.Fatalf("held %d B over the bound %d", b, 3*one)
	}
	c.add([]*rec{ev(4, 10*int(one))}, "t") // larger than the bound: kept by nobody, and everything older goes
	if n, b := c.held(); n != 0 || b != 0 {
		t.Fatalf("an event larger than the bound: held %d events, %d B", n, b)
	}
	c.setMaxBytes(0)
	c.add([]*rec{ev(5, 10)}, "t")
	if n, _ := c.held(); n != 0 {
		t.Fatal("a cache with no bytes remembers nothing")
	}
}
