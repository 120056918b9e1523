package project

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// owned is one event with the ownership set it was accepted with.
type owned struct {
	ev  olevent.Event
	set ownership.Set
}

func (s *scen) applyOwned(evs ...owned) {
	s.t.Helper()
	batch := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		seq := s.seq.Add(1)
		batch = append(batch, Envelope{Event: e.ev, ReceivedAt: time.Now().Add(time.Duration(seq) * time.Millisecond),
			Principal: "test", Source: "replay", Owned: e.set})
	}
	if _, err := s.p.Apply(s.ctx, batch); err != nil {
		s.t.Fatalf("apply: %v", err)
	}
}

// attackHistory is a victim writing datasets in its namespace V (s.dsNS()) and an attacker owning only its job
// namespace and p2 trying every way issue 13 item 1 found to change V: inputs carrying V's lifecycle, metadata and
// schema, a symlink claiming a V name before it exists, a rename out of V, column lineage naming a V column.
func attackHistory(s *scen) []owned {
	p2 := s.ns + "-p2"
	victim := ownership.Of([]string{s.jobNS(), s.dsNS()})
	attacker := ownership.Of([]string{s.jobNS(), p2})
	meta := withSchema(s.ds("vmeta"), "id", "amount")
	meta.Description, meta.Tags = "the victim's table", []olevent.Tag{{Key: "pii", Value: "true"}}
	meta.Owners = []olevent.Owner{{Name: "team:victim"}}
	forged := withSchema(s.ds("vmeta"), "id", "injected")
	forged.Description, forged.Tags = "overwritten", []olevent.Tag{{Key: "public", Value: "yes"}}
	forged.Owners = []olevent.Owner{{Name: "team:attacker"}}
	forged.Lifecycle = &olevent.Lifecycle{State: "DROP"}
	inRename := s.ds("vnew")
	inRename.Lifecycle = &olevent.Lifecycle{State: "RENAME", PreviousIdentifier: &olevent.Identifier{Namespace: s.dsNS(), Name: "vold"}}
	squatter := olevent.Dataset{Namespace: p2, Name: "squatter", Symlinks: []olevent.Identifier{{Namespace: s.dsNS(), Name: "vsquat"}}}
	moved := olevent.Dataset{Namespace: p2, Name: "moved", Lifecycle: &olevent.Lifecycle{State: "RENAME",
		PreviousIdentifier: &olevent.Identifier{Namespace: s.dsNS(), Name: "vold"}}}
	out := withSchema(olevent.Dataset{Namespace: p2, Name: "out"}, "id", "x")
	out.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{
		"id": {{Namespace: s.dsNS(), Name: "vmeta", Field: "id"}},
		"x":  {{Namespace: s.dsNS(), Name: "vmeta", Field: "injected_col"}}}}
	return []owned{
		{s.runEv("v1", olevent.TypeComplete, 10, "victim", "v1", nil, []olevent.Dataset{meta, s.ds("vold")}), victim},
		{s.runEv("a1", olevent.TypeComplete, 20, "attacker", "a1", []olevent.Dataset{forged, inRename},
			[]olevent.Dataset{squatter, out}), attacker},
		{s.runEv("a2", olevent.TypeComplete, 25, "attacker", "a2", nil, []olevent.Dataset{moved}), attacker},
		{s.runEv("v2", olevent.TypeComplete, 30, "victim", "v2", nil, []olevent.Dataset{s.ds("vsquat")}), victim},
	}
}

// TestScenarioAttackerChangesNothingOfTheVictimInAnyOrder applies the attack history in order and shuffled: the
// victim's datasets keep their metadata, names and owner-reported fields, and every order gives the same graph.
func TestScenarioAttackerChangesNothingOfTheVictimInAnyOrder(t *testing.T) {
	s := newScen(t)
	evs := attackHistory(s)
	s.applyOwned(evs...)
	want := s.dump()
	d := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.description AS d, d.tags AS t, d.owners AS o, d.droppedAt AS x`,
		map[string]any{"k": s.dsKey("vmeta")})
	if d["d"] != "the victim's table" || d["x"] != nil || len(d["t"].([]any)) != 1 || d["t"].([]any)[0] != "pii=true" ||
		d["o"] != `[{"Name":"team:victim","Type":""}]` {
		t.Fatalf("victim metadata changed by a reader: %v", d)
	}
	names := s.query(`MATCH (n:DatasetName)-[:NAMES]->(d:Dataset) WHERE n.namespace = $ns RETURN n.name AS n, d.name AS d ORDER BY n`,
		map[string]any{"ns": s.dsNS()})
	for _, n := range names {
		if n["n"] != n["d"] {
			t.Fatalf("a victim name binds another dataset: %v", names)
		}
	}
	unres := s.query(`MATCH (u:UnresolvedIdentity) WHERE u.namespace = $ns RETURN u.name AS n, u.reason AS r ORDER BY n`,
		map[string]any{"ns": s.dsNS()})
	if len(unres) != 2 || unres[0]["n"] != "vold" || unres[0]["r"] != reasonForeignRename ||
		unres[1]["n"] != "vsquat" || unres[1]["r"] != reasonForeignSymlink {
		t.Fatalf("unresolved identities %v", unres)
	}
	// The attacker's input schema (id, injected) closed nothing of the owner's (id, amount); what it and its column
	// lineage named is observed on read; the column edge from the real column id stands.
	fields := s.query(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field) WHERE f.validTo = $open
		RETURN f.path + CASE WHEN f.observedOnRead THEN ' (read)' ELSE '' END AS f ORDER BY f`,
		map[string]any{"k": s.dsKey("vmeta"), "open": openEnd()})
	if got := fmt.Sprint(fields); got != "[map[f:amount] map[f:id] map[f:injected (read)] map[f:injected_col (read)]]" {
		t.Fatalf("victim fields %s", got)
	}
	if e := s.query(`MATCH (:Field {datasetKey: $in, path: 'id'})-[c:COLUMN_FEEDS]->(:Field {path: 'id'}) RETURN c`,
		map[string]any{"in": s.dsKey("vmeta")}); len(e) != 1 {
		t.Fatalf("column edges from the victim's id: %v", e)
	}
	rng := rand.New(rand.NewPCG(13, 1))
	for round := range 6 {
		s.wipe()
		order := append([]owned(nil), evs...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for len(order) > 0 {
			n := min(1+rng.IntN(3), len(order))
			s.applyOwned(order[:n]...)
			order = order[n:]
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d differs:\n%s", round, diffLines(want, got))
		}
	}
}
