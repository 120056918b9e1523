package project

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// downgradeToV1 rewrites the scenario's graph into the layout projection version 1 wrote: Run keyed by the bare
// runId (no runId, parentKey, rootKey), Event keyed by the bare id (no eventId, principal, digest) with runKey the
// bare runId and a publication DatasetEvent linked to its run, Quarantined keyed by the bare id.
func downgradeToV1(s *scen) {
	s.query(`MATCH (r:Run)-[:OF_JOB]->(j:Job) WHERE r.runId IS NOT NULL AND j.namespace STARTS WITH $p
		SET r.key = r.runId REMOVE r.runId, r.parentKey, r.rootKey`, map[string]any{"p": s.ns})
	s.query(`MATCH (e:Event) WHERE e.key STARTS WITH $p
		SET e.key = e.eventId, e.runKey = CASE WHEN e.runKey IS NULL THEN null ELSE split(e.runKey, '@')[0] END
		REMOVE e.eventId, e.principal, e.digest
		WITH e WHERE e.kind = 'DATASET' AND e.runKey IS NOT NULL
		MATCH (r:Run {key: e.runKey}) MERGE (e)-[:OF_RUN]->(r)`, map[string]any{"p": s.ns})
	s.query(`MATCH (q:Quarantined) WHERE q.key STARTS WITH $p SET q.key = q.eventId REMOVE q.eventId`,
		map[string]any{"p": s.ns})
}

var digestProp = regexp.MustCompile(`digest="[^"]*", `)

// Projection version 2 upgrades a graph written by version 1 in place: the same datasets, jobs, runs (now keyed
// by job), events (now keyed by principal) and history as projecting the events with version 2; an event
// version 1 never projected because another principal had used its id is projected by the replay after it.
func TestUpgradeFromProjectionVersion1KeepsIdsAndHistory(t *testing.T) {
	s := newScen(t)
	gate := s.ds("mart")
	gate.Facets = map[string]json.RawMessage{pubFacetKey: json.RawMessage(
		`{"state":"WITHHELD","reason":"check","runId":"` + s.runID("r1") + `"}`)}
	gate.Publication = &olevent.Publication{State: "WITHHELD"}
	child := func(e *olevent.Event) {
		e.Run.Parent = &olevent.ParentRef{RunID: s.runID("r1"), JobNamespace: s.jobNS(), JobName: "build"}
	}
	byA := []olevent.Event{
		s.runEv("r1s", olevent.TypeStart, 10, "build", "r1", []olevent.Dataset{s.ds("src")}, nil),
		s.runEv("r1c", olevent.TypeComplete, 20, "build", "r1", nil, []olevent.Dataset{s.ds("mart")}),
		s.dsEv("gate", 25, gate),
		s.runEv("r2s", olevent.TypeStart, 30, "export", "r2", []olevent.Dataset{s.ds("mart")}, nil, child),
	}
	squatted := s.runEv("shared", olevent.TypeComplete, 40, "export", "r2", nil, []olevent.Dataset{s.ds("side")})
	squat := s.runEv("shared", olevent.TypeStart, 1, "squat", "r9", nil, nil)
	squatted.Raw, squat.Raw = []byte(`{"a":1}`), []byte(`{"b":1}`)
	s.applyAs("producer-a", byA...)
	s.applyAs("producer-b", squat)
	s.applyAs("producer-a", squatted)
	// a run the history loader wrote: state, no events
	s.query(`MATCH (j:Job {key: $j}) CREATE (:Run {key: $k, runId: $id, jobKey: $j, state: 'COMPLETE'})-[:OF_JOB]->(j)`,
		map[string]any{"j": s.jobKey("build"), "k": s.runKey("build", "loaded"), "id": s.runID("loaded")})
	want := digestProp.ReplaceAllString(s.dump(), "")
	datasetKeys := s.query(`MATCH (d:Dataset) WHERE d.namespace STARTS WITH $p RETURN d.key AS k ORDER BY k`,
		map[string]any{"p": s.ns})

	// The same world as version 1 left it: one Event under "shared" (producer-b's), producer-a's never projected.
	s.query(`MATCH (e:Event {key: $k}) DETACH DELETE e`, map[string]any{"k": graph.EventKey("producer-a", s.ns+"-shared")})
	s.p.recent = newRecentEvents(RecentEventsMaxBytes) // a new process
	downgradeToV1(s)
	if n := len(s.query(`MATCH (r:Run {key: $k}) RETURN r`, map[string]any{"k": s.runID("r1")})); n != 1 {
		t.Fatal("downgrade did not write the version-1 layout")
	}

	var owners []EventOwner // what the archive records, in arrival order
	for _, e := range byA {
		owners = append(owners, EventOwner{ID: e.ID, Principal: "producer-a"})
	}
	owners = append(owners, EventOwner{ID: squat.ID, Principal: "producer-b"}, EventOwner{ID: squatted.ID, Principal: "producer-a"})
	if n, err := s.p.UpgradeEventKeys(s.ctx, owners); err != nil || n != len(byA)+1 {
		t.Fatalf("upgrade event keys: %d %v", n, err)
	}
	if n, err := s.p.UpgradeRuns(s.ctx, s.ns); err != nil || n != 4 {
		t.Fatalf("upgrade runs: %d %v", n, err)
	}
	// the replay after the upgrade: everything is a duplicate but the event version 1 never projected
	s.applyAs("producer-a", byA...)
	s.applyAs("producer-b", squat)
	if res := s.applyAs("producer-a", squatted); res.Projected != 1 {
		t.Fatalf("replay after the upgrade: %+v", res)
	}
	if got := digestProp.ReplaceAllString(s.dump(), ""); got != want {
		t.Fatalf("upgraded graph differs from a version-2 projection:\n%s", diffLines(want, got))
	}
	got := s.query(`MATCH (d:Dataset) WHERE d.namespace STARTS WITH $p RETURN d.key AS k ORDER BY k`, map[string]any{"p": s.ns})
	if len(got) != len(datasetKeys) {
		t.Fatalf("dataset keys %v, want %v", got, datasetKeys)
	}
}
