package project

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/rules"
)

// hijackHistory is a victim job's run r1 (START reading src, COMPLETE writing mart, a quality gate withholding
// mart for r1) and another job's events under the same runId: a FAIL writing its own dataset, and a START whose
// parent facet names the victim's run.
func hijackHistory(s *scen) (victim, attacker []olevent.Event) {
	gate := s.ds("mart")
	gate.Facets = map[string]json.RawMessage{pubFacetKey: json.RawMessage(
		`{"state":"WITHHELD","reason":"check failed","runId":"` + s.runID("r1") + `"}`)}
	gate.Publication = &olevent.Publication{State: "WITHHELD"}
	victim = []olevent.Event{
		s.runEv("v-start", olevent.TypeStart, 10, "build", "r1", []olevent.Dataset{s.ds("src")}, nil),
		s.runEv("v-complete", olevent.TypeComplete, 20, "build", "r1", nil, []olevent.Dataset{s.ds("mart")}),
		s.dsEv("v-gate", 25, gate),
	}
	evil := func(e *olevent.Event) { e.Job.Namespace = s.ns + "-zz-attacker" }
	loot := olevent.Dataset{Namespace: s.ns + "-zz-loot", Name: "loot"}
	attacker = []olevent.Event{
		s.runEv("a-start", olevent.TypeStart, 5, "evil", "r1", nil, nil, evil, func(e *olevent.Event) {
			e.Run.Parent = &olevent.ParentRef{RunID: s.runID("r1"), JobNamespace: s.jobNS(), JobName: "build"}
		}),
		s.runEv("a-fail", olevent.TypeFail, 30, "evil", "r1", []olevent.Dataset{s.ds("src")},
			[]olevent.Dataset{loot}, evil, func(e *olevent.Event) { e.Run.ErrorMessage = "hijack" }),
		// a parent the victim job never ran: a reference, not a run of the victim job
		s.runEv("a-phantom", olevent.TypeStart, 31, "evil2", "r2", nil, nil, evil, func(e *olevent.Event) {
			e.Run.Parent = &olevent.ParentRef{RunID: s.runID("phantom"), JobNamespace: s.jobNS(), JobName: "build"}
		}),
	}
	return victim, attacker
}

// applyShuffled applies the events in a random order, in random small batches with redeliveries.
func applyShuffled(s *scen, evs []olevent.Event, rng *rand.Rand) {
	order := append([]olevent.Event(nil), evs...)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for len(order) > 0 {
		n := min(1+rng.IntN(3), len(order))
		batch := append([]olevent.Event(nil), order[:n]...)
		if rng.IntN(3) == 0 {
			batch = append(batch, order[0])
		}
		s.apply(batch...)
		order = order[n:]
	}
}

// Issue 13 item 2: a run is keyed by (job, runId). Another job's events under the victim's runId, in any order,
// leave the victim job's projection (its runs, events, edges, datasets) exactly as without them, and get a run of
// their own.
func TestScenarioRunIDOfAnotherJobNeverTouchesItsRun(t *testing.T) {
	s := newScen(t)
	victim, attacker := hijackHistory(s)
	evilJob := graph.JobKey(s.ns+"-zz-attacker", "evil")
	evilRun := graph.RunKey(s.runID("r1"), evilJob)
	// victimView is the dump without the lines that name the other job, its run, its events or its dataset.
	victimView := func() string {
		var keep []string
		for l := range strings.SplitSeq(s.dump(), "\n") {
			if !strings.Contains(l, evilJob) && !strings.Contains(l, evilRun) && !strings.Contains(l, "-zz-") &&
				!strings.Contains(l, s.ns+"-a-") && !strings.Contains(l, s.runID("phantom")) &&
				!strings.Contains(l, s.runID("r2")) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	s.apply(victim...)
	wantVictim := victimView()
	if !strings.Contains(wantVictim, `state="COMPLETE"`) || !strings.Contains(wantVictim, `publication="WITHHELD"`) {
		t.Fatalf("victim alone: run not COMPLETE or gate not applied:\n%s", wantVictim)
	}
	all := append(append([]olevent.Event(nil), victim...), attacker...)
	rng := rand.New(rand.NewPCG(13, 2))
	var want string
	for round := range 8 {
		s.wipe()
		applyShuffled(s, all, rng)
		if got := victimView(); got != wantVictim {
			t.Fatalf("round %d: the other job's events changed the victim's projection:\n%s", round, diffLines(wantVictim, got))
		}
		whole := s.dump()
		if round == 0 {
			want = whole
		} else if whole != want {
			t.Fatalf("round %d: the outcome depends on arrival order:\n%s", round, diffLines(want, whole))
		}
		if runs := s.query(`MATCH (r:Run {jobKey: $j}) RETURN r.key AS k`, map[string]any{"j": s.jobKey("build")}); len(runs) != 1 {
			t.Fatalf("round %d: the victim job lists runs it never ran: %v", round, runs)
		}
		own := s.one(`MATCH (r:Run {key: $k})-[:OF_JOB]->(j:Job) RETURN r.state AS st, r.errorMessage AS msg,
			[(r)-[:CHILD_OF]->(p:Run) | p.key] AS parents`, map[string]any{"k": evilRun})
		if own["st"] != olevent.TypeFail || own["msg"] != "hijack" || len(own["parents"].([]any)) != 1 ||
			own["parents"].([]any)[0] != s.runKey("build", "r1") {
			t.Fatalf("round %d: the other job's run %v", round, own)
		}
	}
}

// applyAs applies events sent by a principal.
func (s *scen) applyAs(principal string, evs ...olevent.Event) Result {
	s.t.Helper()
	batch := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		batch = append(batch, Envelope{Event: e, ReceivedAt: s.at(100), Principal: principal, Source: "replay"})
	}
	res, err := s.p.Apply(s.ctx, batch)
	if err != nil {
		s.t.Fatalf("apply: %v", err)
	}
	return res
}

// Issue 13 item 5: an event id is scoped by its producer principal. Another principal's earlier event under the
// same id does not make this one a duplicate; the same principal's id with other content is an id conflict,
// quarantined (rule id-conflict) without touching what was projected; a redelivery is a duplicate.
func TestScenarioEventIDsAreScopedByPrincipal(t *testing.T) {
	s := newScen(t)
	withRaw := func(e olevent.Event, raw string) olevent.Event { e.Raw = []byte(raw); return e }
	mine := withRaw(s.runEv("shared", olevent.TypeStart, 10, "build", "r1", nil, nil), `{"v":1}`)
	squat := withRaw(s.runEv("shared", olevent.TypeStart, 5, "other", "r2", nil, nil), `{"v":2}`)
	if res := s.applyAs("producer-b", squat); res.Projected != 1 {
		t.Fatalf("squatter: %+v", res)
	}
	if res := s.applyAs("producer-a", mine); res.Projected != 1 || res.Duplicates != 0 {
		t.Fatalf("an id another principal used first made this event a duplicate: %+v", res)
	}
	if got := s.run("r1")["state"]; got != olevent.TypeStart {
		t.Fatalf("run r1 state %v", got)
	}
	reused := withRaw(s.runEv("shared", olevent.TypeComplete, 20, "build", "r1", nil, nil), `{"v":3}`)
	if res := s.applyAs("producer-a", reused, mine); res.IDConflicts != 1 || res.Projected != 0 || res.Duplicates != 1 {
		t.Fatalf("id reused for other content: %+v", res)
	}
	if got := s.run("r1")["state"]; got != olevent.TypeStart {
		t.Fatalf("an id conflict changed the run: %v", got)
	}
	q := s.one(`MATCH (q:Quarantined {key: $k}) RETURN q.rule AS rule, q.field AS field, q.principal AS p`,
		map[string]any{"k": graph.EventKey("producer-a", s.ns+"-shared")})
	if q["rule"] != rules.IDConflict || q["field"] != "eventId" || q["p"] != "producer-a" {
		t.Fatalf("quarantine record %v", q)
	}
	if n := len(s.query(`MATCH (q:Quarantined {key: $k}) RETURN q`,
		map[string]any{"k": graph.EventKey("producer-b", s.ns+"-shared")})); n != 0 {
		t.Fatalf("the other principal's event was marked conflicting")
	}
}
