package project

import (
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// A name this projector has bound, and that another instance's concurrent transaction binds to a second dataset
// (a rename x -> y whose lookup ran before this projector's binding of y committed: partitions follow jobs, so
// one dataset's names are bound from every partition), is reported as bound to two datasets by this projector's
// next batch naming it: the binding is read in the transaction, never held across batches
// (docs/adr/0080-no-identity-binding-cache.md). The race's outcome is written by hand: two sequential
// transactions cannot interleave a lookup and a commit.
func TestScenarioIdentityBoundByAnotherInstanceIsNeverMissed(t *testing.T) {
	s := newScen(t)
	p := s.newProjector()
	s.applyWith(p, []Envelope{{Event: s.runEv("s1", olevent.TypeStart, 10, "load", "r1",
		[]olevent.Dataset{s.ds("y")}, []olevent.Dataset{s.ds("out")})}})
	s.applyWith(p, []Envelope{{Event: s.runEv("c1", olevent.TypeComplete, 20, "load", "r1",
		[]olevent.Dataset{s.ds("y")}, []olevent.Dataset{s.ds("out")})}})
	s.query(`MATCH (n:DatasetName)-[:NAMES]->(:Dataset {key: $y})
		CREATE (x:Dataset {key: $x, namespace: $ns, name: 'y', env: 'prod', createdAt: $t, identityAt: $t,
			searchName: 'y', normVersion: $nv})
		CREATE (n)-[:NAMES {kind: 'PRIMARY', validFrom: $t, validTo: $open}]->(x)`,
		map[string]any{"y": s.dsKey("y"), "x": s.dsKey("x"), "ns": s.dsNS(), "t": s.at(30).UnixMilli(),
			"open": graph.OpenEnd, "nv": NormVersion})
	res, err := p.Apply(s.ctx, []Envelope{{Event: s.runEv("s2", olevent.TypeStart, 40, "load", "r2",
		[]olevent.Dataset{s.ds("y")}, []olevent.Dataset{s.ds("out")})}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unresolved != 1 {
		t.Fatalf("the projector's next batch naming y reported %d unresolved identifiers, want 1 (y names two datasets)",
			res.Unresolved)
	}
	u := s.one(`MATCH (u:UnresolvedIdentity {namespace: $ns, name: 'y'}) RETURN u.reason AS r, u.eventIds AS e`,
		map[string]any{"ns": s.dsNS()})
	if u["r"] != reasonTwoNodes {
		t.Fatalf("unresolved %v, want reason %q", u, reasonTwoNodes)
	}
}
