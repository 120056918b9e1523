package project

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// The alias rule (ADR 0027): which (jobType, unique_id) pairs make a dbt node job, and in which role.
func TestDbtRoleRule(t *testing.T) {
	cases := []struct{ jobType, uid, want string }{
		{"MODEL", "model.p.orders", graph.DbtRoleNode},
		{"model", "model.p.orders", graph.DbtRoleNode}, // jobType compared case-insensitively
		{"SEED", "seed.p.raw", graph.DbtRoleNode},
		{"SNAPSHOT", "snapshot.p.snap", graph.DbtRoleNode},
		{"TEST", "test.p.not_null_orders_id.81cfe2fe64", graph.DbtRoleNode}, // structured logs, singular tests
		{"TEST", "model.p.orders", graph.DbtRoleTests},                      // dbt-ol's per-model test job
		{"TEST", "source.p.raw.orders", graph.DbtRoleTests},
		{"TEST", "seed.p.raw", graph.DbtRoleTests},
		{"TEST", "snapshot.p.snap", graph.DbtRoleTests},
		{"MODEL", "test.p.t", ""}, // a model job naming a test: no dbt node job
		{"MODEL", "seed.p.raw", ""},
		{"SEED", "model.p.orders", ""},
		{"SQL", "model.p.orders", ""}, // structured-logs SQL statements (they carry no facet anyway)
		{"JOB", "model.p.orders", ""}, // the invocation
		{"", "model.p.orders", ""},    // no jobType: not guessed from the id
		{"MODEL", "source.p.raw.orders", ""},
	}
	for _, c := range cases {
		if got := dbtRole(c.jobType, c.uid); got != c.want {
			t.Errorf("dbtRole(%q, %q) = %q, want %q", c.jobType, c.uid, got, c.want)
		}
	}
}

// applyDbtIdentity: the key is (namespace, unique_id, role); the run key stays the reported name's; a producer
// that does not own the job namespace (the gateway refuses it; the projector does not rely on that) gets no alias.
func TestApplyDbtIdentity(t *testing.T) {
	mk := func() *jobRec {
		return &jobRec{Key: graph.JobKey("ns", "w.m.p.orders.build.run"), NS: "ns", Name: "w.m.p.orders.build.run"}
	}
	ev := &olevent.Job{Namespace: "ns", Name: "w.m.p.orders.build.run", JobType: "MODEL", DbtUniqueID: "model.p.orders"}
	j := mk()
	applyDbtIdentity(j, ev, ownership.All())
	if j.Key != graph.DbtJobKey("ns", "model.p.orders", graph.DbtRoleNode) || j.nameKey() != graph.JobKey("ns", ev.Name) ||
		j.DbtUniqueID != "model.p.orders" || j.DbtRole != graph.DbtRoleNode {
		t.Fatalf("aliased job %+v", j)
	}
	if graph.DbtJobKey("ns", "model.p.orders", graph.DbtRoleNode) == graph.DbtJobKey("ns", "model.p.orders", graph.DbtRoleTests) ||
		graph.DbtJobKey("ns", "model.p.orders", graph.DbtRoleNode) == graph.DbtJobKey("ns2", "model.p.orders", graph.DbtRoleNode) {
		t.Fatal("role and namespace must be part of the key")
	}
	for name, c := range map[string]struct {
		ev    olevent.Job
		owned ownership.Set
	}{
		"no facet":         {olevent.Job{JobType: "MODEL"}, ownership.All()},
		"not owned":        {*ev, ownership.Of([]string{"other"})},
		"jobType disagree": {olevent.Job{JobType: "SEED", DbtUniqueID: "model.p.orders"}, ownership.All()},
	} {
		j := mk()
		applyDbtIdentity(j, &c.ev, c.owned)
		if j.Key != graph.JobKey("ns", "w.m.p.orders.build.run") || j.NameKey != "" || j.DbtRole != "" {
			t.Errorf("%s: aliased anyway: %+v", name, j)
		}
	}
}

// dbtHistory is what dbt-ol reports for one model over three commands (build, run, build with
// --consume-structured-logs, whose SQL statement names the node's run as its parent), the per-model test job,
// a job reported without the facet under one of the model's names (another job: nothing is joined by name), and a
// run whose START lacks the facet and whose COMPLETE carries it (filed under the model, whatever the order).
func dbtHistory(s *scen) []olevent.Event {
	const uid = "model.p.orders"
	dbt := func(jobType, id string) evMod {
		return func(e *olevent.Event) { e.Job.JobType, e.Job.DbtUniqueID, e.Job.Integration = jobType, id, "DBT" }
	}
	child := func(parentRun, parentJob string) evMod {
		return func(e *olevent.Event) {
			e.Run.Parent = &olevent.ParentRef{RunID: s.runID(parentRun), JobNamespace: s.jobNS(), JobName: parentJob}
		}
	}
	src, out := []olevent.Dataset{s.ds("stg")}, []olevent.Dataset{withSchema(s.ds("orders"), "id")}
	return []olevent.Event{
		s.runEv("b-s", olevent.TypeStart, 10, "w.m.p.orders.build.run", "b", src, nil, dbt("MODEL", uid)),
		s.runEv("b-c", olevent.TypeComplete, 20, "w.m.p.orders.build.run", "b", src, out, dbt("MODEL", uid)),
		s.runEv("t-s", olevent.TypeStart, 21, "w.m.p.orders.build.test", "t", []olevent.Dataset{s.ds("orders")}, nil, dbt("TEST", uid)),
		s.runEv("t-c", olevent.TypeComplete, 22, "w.m.p.orders.build.test", "t", []olevent.Dataset{s.ds("orders")}, nil, dbt("TEST", uid)),
		s.runEv("r-s", olevent.TypeStart, 30, "w.m.p.orders", "r", src, nil, dbt("MODEL", uid)),
		s.runEv("r-f", olevent.TypeFail, 40, "w.m.p.orders", "r", src, out, dbt("MODEL", uid)),
		s.runEv("sl-s", olevent.TypeStart, 50, uid, "sl", src, out, dbt("MODEL", uid)),
		s.runEv("sql-s", olevent.TypeStart, 51, uid+".sql.1", "sql", nil, nil, child("sl", uid),
			func(e *olevent.Event) { e.Job.JobType = "SQL" }),
		s.runEv("sql-c", olevent.TypeComplete, 52, uid+".sql.1", "sql", nil, nil, child("sl", uid)),
		s.runEv("sl-c", olevent.TypeComplete, 60, uid, "sl", src, out, dbt("MODEL", uid)),
		s.runEv("plain-s", olevent.TypeStart, 70, "w.m.p.orders", "plain", nil, nil),
		s.runEv("plain-c", olevent.TypeComplete, 71, "w.m.p.orders", "plain", nil, []olevent.Dataset{s.ds("elsewhere")}),
		s.runEv("mix-s", olevent.TypeStart, 80, "w.m.p.orders.build.run", "mix", []olevent.Dataset{s.ds("raw")}, nil),
		s.runEv("mix-c", olevent.TypeComplete, 90, "w.m.p.orders.build.run", "mix", []olevent.Dataset{s.ds("raw")}, out,
			dbt("MODEL", uid)),
	}
}

func TestScenarioDbtJobAlias(t *testing.T) {
	s := newScen(t)
	evs := dbtHistory(s)
	s.apply(evs...)
	model := graph.DbtJobKey(s.jobNS(), "model.p.orders", graph.DbtRoleNode)
	j := s.one(`MATCH (j:Job {key: $k}) RETURN properties(j) AS p`, map[string]any{"k": model})["p"].(map[string]any)
	wantNames := []any{"model.p.orders", "w.m.p.orders", "w.m.p.orders.build.run"}
	if j["dbtUniqueId"] != "model.p.orders" || j["dbtRole"] != graph.DbtRoleNode || !slices.Equal(j["names"].([]any), wantNames) ||
		j["name"] != "w.m.p.orders.build.run" || j["namespace"] != s.jobNS() || j["jobType"] != "MODEL" {
		t.Fatalf("the model's job: %v", j)
	}
	// runs of every command under the one job, each keyed by the name it was reported under
	runs := s.query(`MATCH (r:Run)-[:OF_JOB]->(:Job {key: $k}) RETURN r.key AS k ORDER BY k`, map[string]any{"k": model})
	var got []string
	for _, r := range runs {
		got = append(got, r["k"].(string))
	}
	want := []string{graph.RunKey(s.runID("b"), s.jobKey("w.m.p.orders.build.run")), graph.RunKey(s.runID("r"), s.jobKey("w.m.p.orders")),
		graph.RunKey(s.runID("sl"), s.jobKey("model.p.orders")), graph.RunKey(s.runID("mix"), s.jobKey("w.m.p.orders.build.run"))}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("runs of the model's job %v, want %v", got, want)
	}
	// the structured-logs SQL statement's parent is the node's run (named by the node's job name)
	p := s.one(`MATCH (:Run {key: $c})-[:CHILD_OF]->(p:Run)-[:OF_JOB]->(j:Job) RETURN p.key AS p, j.key AS j`,
		map[string]any{"c": graph.RunKey(s.runID("sql"), s.jobKey("model.p.orders.sql.1"))})
	if p["p"] != graph.RunKey(s.runID("sl"), s.jobKey("model.p.orders")) || p["j"] != model {
		t.Fatalf("SQL statement's parent %v", p)
	}
	// the per-model test job is its own job; the facet-less job of the same name is another job
	tests := s.one(`MATCH (j:Job {key: $k}) RETURN j.dbtUniqueId AS u, j.names AS n, j.name AS name`,
		map[string]any{"k": graph.DbtJobKey(s.jobNS(), "model.p.orders", graph.DbtRoleTests)})
	if tests["u"] != "model.p.orders" || tests["name"] != "w.m.p.orders.build.test" {
		t.Fatalf("test job %v", tests)
	}
	plain := s.one(`MATCH (j:Job {key: $k}) OPTIONAL MATCH (r:Run)-[:OF_JOB]->(j) RETURN j.dbtUniqueId AS u, collect(r.key) AS runs`,
		map[string]any{"k": s.jobKey("w.m.p.orders")})
	if plain["u"] != nil || !slices.Equal(plain["runs"].([]any), []any{graph.RunKey(s.runID("plain"), s.jobKey("w.m.p.orders"))}) {
		t.Fatalf("facet-less job %v", plain)
	}
	// one lineage edge per (dataset, job) folding the runs of all commands; the mixed run's input is on the model
	if e := s.query(`MATCH (d:Dataset {key: $d})-[:INPUT_TO]->(j:Job) RETURN j.key AS j`, map[string]any{"d": s.dsKey("raw")}); len(e) != 1 || e[0]["j"] != model {
		t.Fatalf("raw's readers %v", e)
	}
	if e := s.query(`MATCH (j:Job)-[:OUTPUT_TO]->(d:Dataset {key: $d}) RETURN j.key AS j`, map[string]any{"d": s.dsKey("orders")}); len(e) != 1 || e[0]["j"] != model {
		t.Fatalf("orders' writers %v", e)
	}
}

// Retries, reordering, batching and replay give the same graph (ADR 0027, point 8).
func TestShuffleDbtJobAlias(t *testing.T) {
	s := newScen(t)
	evs := dbtHistory(s)
	for _, e := range evs {
		s.apply(e)
	}
	want := s.dump()
	rng := rand.New(rand.NewPCG(27, 14))
	for round := range 8 {
		s.wipe()
		order := append([]olevent.Event(nil), evs...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for len(order) > 0 {
			n := min(1+rng.IntN(4), len(order))
			batch := append([]olevent.Event(nil), order[:n]...)
			if rng.IntN(3) == 0 {
				batch = append(batch, order[0])
			}
			s.apply(batch...)
			order = order[n:]
		}
		if rng.IntN(2) == 0 {
			s.apply(evs[rng.IntN(len(evs))])
		}
		if got := s.dump(); got != want {
			t.Fatalf("round %d differs:\n%s", round, diffLines(want, got))
		}
	}
}

// A producer without PRODUCE on the job namespace gets no alias: its events stay on the (namespace, name) job.
func TestScenarioDbtAliasNeedsOwnedJobNamespace(t *testing.T) {
	s := newScen(t)
	e := s.runEv("x", olevent.TypeStart, 10, "w.m.p.orders", "x", nil, nil,
		func(e *olevent.Event) { e.Job.JobType, e.Job.DbtUniqueID = "MODEL", "model.p.orders" })
	if _, err := s.p.Apply(s.ctx, []Envelope{{Event: e, ReceivedAt: time.Now(), Principal: testPrincipal, Source: "replay",
		Owned: ownership.Of([]string{s.dsNS()})}}); err != nil {
		t.Fatal(err)
	}
	r := s.one(`MATCH (r:Run {key: $k}) RETURN r.jobKey AS j`, map[string]any{"k": s.runKey("w.m.p.orders", "x")})
	if r["j"] != s.jobKey("w.m.p.orders") {
		t.Fatalf("run filed under %v", r["j"])
	}
	if rows := s.query(`MATCH (j:Job {key: $k}) RETURN j`, map[string]any{"k": graph.DbtJobKey(s.jobNS(), "model.p.orders", graph.DbtRoleNode)}); len(rows) != 0 {
		t.Fatal("a dbt node job was created for a namespace the producer does not own")
	}
}

// A graph projected before ADR 0027 (each dbt-ol name its own job) is upgraded to what projecting the same events
// today gives; a second upgrade changes nothing. (Not covered: a run whose events disagree on the facet, which
// leaves the upgraded graph without the facet-less job a fresh projection keeps empty.)
func TestUpgradeDbtJobsGivesTheFreshProjection(t *testing.T) {
	s := newScen(t)
	evs := dbtHistory(s)[:12]
	s.apply(evs...)
	want := s.dump()
	s.wipe()
	facets := 0
	for _, e := range evs { // what projection version 2 made of them: the facet was not interpreted
		j := *e.Job
		if j.DbtUniqueID != "" {
			facets++
		}
		j.DbtUniqueID = ""
		e.Job = &j
		s.apply(e)
	}
	if before := s.dump(); before == want {
		t.Fatal("the earlier projection already has the dbt node jobs: nothing to upgrade")
	}
	envs := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		envs = append(envs, Envelope{Event: e, ReceivedAt: time.Now(), Principal: testPrincipal, Source: "replay"})
	}
	n, err := s.p.UpgradeDbtJobs(s.ctx, envs, s.jobNS())
	if err != nil {
		t.Fatal(err)
	}
	if n != facets {
		t.Fatalf("moved %d events, want %d", n, facets)
	}
	if got := s.dump(); got != want {
		t.Fatalf("upgraded graph differs from the fresh projection:\n%s", diffLines(want, got))
	}
	if n, err := s.p.UpgradeDbtJobs(s.ctx, envs, s.jobNS()); err != nil || n != 0 {
		t.Fatalf("second upgrade: %d, %v", n, err)
	}
}
