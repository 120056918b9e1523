package resolvers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

const gapsLineageQ = `query($ns: String!, $name: String!, $dir: Direction!, $depth: Int!) {
  lineage(start: {dataset: {namespace: $ns, name: $name}}, direction: $dir, depth: $depth) {
    nodes { id ... on Dataset { name } } edges { id job { id name } }
    gaps { kind message nodes edges numerator denominator since }
    coverage { datasets withExpectedWriter reporting label } } }`

type gapsAnswer struct {
	Lineage struct {
		Nodes []struct{ ID, Name string }
		Gaps  []struct {
			Kind, Message          string
			Nodes, Edges           []string
			Numerator, Denominator *int
			Since                  *time.Time
		}
		Coverage *struct {
			Datasets, WithExpectedWriter, Reporting int
			Label                                   string
		}
	}
}

func (a gapsAnswer) kinds(kind string) []int {
	var out []int
	for i, g := range a.Lineage.Gaps {
		if g.Kind == kind {
			out = append(out, i)
		}
	}
	return out
}

// register stores one list inventory of jobs in the fixture's namespace.
func registerList(t *testing.T, fx *lineagetest.Fixture, jobs []inventory.Job) {
	t.Helper()
	inv := inventory.Inventory{Source: "gaps-" + testenv.Token(6), Kind: inventory.KindList, Jobs: jobs}
	if err := inv.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewStore(fx.Store).Register(t.Context(), inv, "test", fx.Now); err != nil {
		t.Fatal(err)
	}
}

// A list of 10 expected jobs of which 7 report: a downstream lineage answer carries one JOB_NOT_REPORTING gap
// for each of the 3 that write datasets on its path (two never reported, one late), named, with the figure
// "3 of 5" (the expected writers of its datasets) and the datasets they write; the off-path jobs are not
// counted; the answer's coverage counts its datasets with an expected writer and with one that reported.
func TestJobNotReportingNamesTheJobsOnThePath(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	d0, d1, d2, d3 := fx.Dataset("g.d0"), fx.Dataset("g.d1"), fx.Dataset("g.d2"), fx.Dataset("g.d3")
	fx.Flow(fx.Job("g.j1"), []string{d0}, []string{d1})
	fx.Flow(fx.Job("g.j2"), []string{d1}, []string{d2})
	fx.Flow(fx.Job("g.j3"), []string{d2}, []string{d3})
	late := fx.Job("g.late")
	fx.Exec(`MATCH (j:Job {key: $k}) SET j.lastSeenAt = $t`, map[string]any{"k": late, "t": graph.Millis(fx.Now.Add(-72 * time.Hour))})
	day := 24 * time.Hour
	out := func(n string) []inventory.Dataset { return []inventory.Dataset{{Namespace: fx.NS, Name: n}} }
	jobs := []inventory.Job{
		{Namespace: fx.NS, Name: "g.j1", Interval: day, Outputs: out("g.d1")},           // reporting
		{Namespace: fx.NS, Name: "g.j2", Interval: day, Outputs: out("g.d2")},           // reporting
		{Namespace: fx.NS, Name: "g.never3", Interval: day, Outputs: out("g.d3")},       // never reported
		{Namespace: fx.NS, Name: "g.late", Interval: day, Outputs: out("g.d2")},         // late (3 days)
		{Namespace: fx.NS, Name: "g.never5", Interval: day, Outputs: out("g.d3")},       // never reported
		{Namespace: fx.NS, Name: "g.off1", Interval: day, Outputs: out("g.elsewhere")},  // off the path
		{Namespace: fx.NS, Name: "g.off2", Interval: day, Outputs: out("g.elsewhere2")}, // off the path
	}
	for _, n := range []string{"g.off1", "g.off2", "g.r4", "g.r5", "g.r6"} {
		fx.Job(n)
	}
	for _, n := range []string{"g.r4", "g.r5", "g.r6"} { // reporting, writing nothing on the path
		jobs = append(jobs, inventory.Job{Namespace: fx.NS, Name: n, Interval: day})
	}
	registerList(t, fx, jobs)
	var cov struct {
		Coverage struct {
			JobsReporting struct{ Numerator, Denominator int }
		}
	}
	h.mustQuery(`query($ns: String) { coverage(namespace: $ns) { jobsReporting { numerator denominator } } }`,
		map[string]any{"ns": fx.NS}, &cov)
	if f := cov.Coverage.JobsReporting; f.Numerator != 7 || f.Denominator != 10 {
		t.Fatalf("jobsReporting %+v, want 7 of 10", f)
	}
	var a gapsAnswer
	h.mustQuery(gapsLineageQ, map[string]any{"ns": fx.NS, "name": "g.d0", "dir": "DOWNSTREAM", "depth": 3}, &a)
	idx := a.kinds("JOB_NOT_REPORTING")
	if len(idx) != 3 {
		t.Fatalf("JOB_NOT_REPORTING gaps %d, want 3: %+v", len(idx), a.Lineage.Gaps)
	}
	wantJobs := []string{"g.late", "g.never3", "g.never5"}
	wantNodes := map[string]string{"g.late": api.DatasetID(d2), "g.never3": api.DatasetID(d3), "g.never5": api.DatasetID(d3)}
	for k, i := range idx {
		g := a.Lineage.Gaps[i]
		if !strings.Contains(g.Message, wantJobs[k]) || !strings.HasPrefix(g.Message, "3 of 5 upstream jobs are not reporting") {
			t.Errorf("gap %d message %q, want %s named and 3 of 5", k, g.Message, wantJobs[k])
		}
		if g.Numerator == nil || *g.Numerator != 3 || g.Denominator == nil || *g.Denominator != 5 {
			t.Errorf("gap %d figure %v of %v, want 3 of 5", k, g.Numerator, g.Denominator)
		}
		if !slices.Contains(g.Nodes, wantNodes[wantJobs[k]]) {
			t.Errorf("gap %d nodes %v lack the dataset it writes", k, g.Nodes)
		}
		if strings.Contains(g.Message, "g.off") || strings.Contains(g.Message, "g.r") {
			t.Errorf("gap names an off-path or unscheduled job: %q", g.Message)
		}
	}
	if g := a.Lineage.Gaps[idx[0]]; g.Since == nil || !g.Since.Equal(fx.Now.Add(-72*time.Hour)) ||
		!strings.Contains(g.Message, "last reported 3 days ago") || !slices.Contains(g.Nodes, api.JobID(late)) {
		t.Errorf("late gap: %+v", g)
	}
	if c := a.Lineage.Coverage; c == nil || c.Datasets != 4 || c.WithExpectedWriter != 3 || c.Reporting != 2 {
		t.Errorf("coverage %+v, want 4 datasets, 3 with an expected writer, 2 reporting", c)
	}
	// Upstream of d1 only g.j1's output is on the answer: it reports, no gap.
	var up gapsAnswer
	h.mustQuery(gapsLineageQ, map[string]any{"ns": fx.NS, "name": "g.d1", "dir": "UPSTREAM", "depth": 3}, &up)
	if n := len(up.kinds("JOB_NOT_REPORTING")); n != 0 || up.Lineage.Coverage.Reporting != 1 {
		t.Errorf("upstream of d1: %d gaps, coverage %+v", n, up.Lineage.Coverage)
	}
}

// producerRun writes a run of job by principal with events received at each of times (the latest run's first
// event at the first of them).
func producerRun(fx *lineagetest.Fixture, job, principal string, times []time.Time) {
	run := "00000000-0000-4000-8000-" + testenv.Token(12)
	fx.Exec(`MATCH (j:Job {key: $job}) CREATE (r:Run {key: $id, jobKey: $job, state: 'COMPLETE', firstEventAt: $first})-[:OF_JOB]->(j)`,
		map[string]any{"job": job, "id": run, "first": graph.Millis(times[0])})
	for i, at := range times {
		fx.Exec(`MATCH (r:Run {key: $id}) CREATE (e:Event {key: $ek, eventId: $eid, principal: $p, runKey: $id, kind: 'RUN',
  eventType: 'COMPLETE', eventTime: $t, receivedAt: $t})-[:OF_RUN]->(r)`, map[string]any{"id": run,
			"ek": graph.EventKey(principal, fmt.Sprintf("%s-%d", run, i)), "eid": fmt.Sprintf("%s-%d", run, i), "p": principal,
			"t": graph.Millis(at)})
	}
}

// A producer that sent an event a day for a week and then nothing for 5 days is quiet (P95 gap 1 day, times 3):
// the lineage answer through its job carries PRODUCER_STALE naming it, its job and its edge, "last observed 5 days
// ago"; a producer that reports hourly is not quiet; the figure is 1 of 2.
func TestProducerStaleOnTheAnswer(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	src, mid, dst := fx.Dataset("p.src"), fx.Dataset("p.mid"), fx.Dataset("p.dst")
	jq, jf := fx.Job("p.quiet"), fx.Job("p.fresh")
	fx.Flow(jq, []string{src}, []string{mid})
	fx.Flow(jf, []string{mid}, []string{dst})
	quiet, fresh := fx.NS+"-quietprod", fx.NS+"-freshprod"
	var daily, hourly []time.Time
	for d := 12; d >= 5; d-- {
		daily = append(daily, fx.Now.Add(-time.Duration(d)*24*time.Hour))
	}
	for hr := 10; hr >= 1; hr-- {
		hourly = append(hourly, fx.Now.Add(-time.Duration(hr)*time.Hour))
	}
	producerRun(fx, jq, quiet, daily)
	producerRun(fx, jf, fresh, hourly)
	var a gapsAnswer
	h.mustQuery(gapsLineageQ, map[string]any{"ns": fx.NS, "name": "p.src", "dir": "DOWNSTREAM", "depth": 3}, &a)
	idx := a.kinds("PRODUCER_STALE")
	if len(idx) != 1 {
		t.Fatalf("PRODUCER_STALE gaps %d, want 1: %+v", len(idx), a.Lineage.Gaps)
	}
	g := a.Lineage.Gaps[idx[0]]
	if !strings.Contains(g.Message, quiet) || !strings.Contains(g.Message, "last observed 5 days ago") ||
		!strings.Contains(g.Message, "quiet after 3 days") || strings.Contains(g.Message, fresh) {
		t.Errorf("message %q", g.Message)
	}
	if g.Since == nil || !g.Since.Equal(daily[len(daily)-1]) || *g.Numerator != 1 || *g.Denominator != 2 {
		t.Errorf("figure %v of %v since %v", *g.Numerator, *g.Denominator, g.Since)
	}
	if len(g.Nodes) != 1 || g.Nodes[0] != api.JobID(jq) || len(g.Edges) != 1 {
		t.Errorf("nodes %v edges %v, want the quiet job and its edge src -> mid", g.Nodes, g.Edges)
	}
}

// checkTrustGaps (TestLeakSuite) asserts what the trust gaps show each principal on "lineage both": the admin
// sees every expected writer of pub.mid and pub.out (2 of 4 not reporting: pub.never and the hidden one) and
// the quiet producer of pub.j2, named; the narrow principal sees only the visible expected writers (1 of 2: pub.never),
// coverage counted over them, and no producer but its own.
func (w *world) checkTrustGaps() {
	w.t.Helper()
	op := w.operations()["lineage both"]
	decode := func(p string) gapsAnswer {
		var r struct{ Data gapsAnswer }
		if err := json.Unmarshal(w.post(p, op.q, op.vars), &r); err != nil {
			w.t.Fatal(err)
		}
		return r.Data
	}
	admin, narrow := decode(w.admin), decode(w.narrow)
	if idx := admin.kinds("JOB_NOT_REPORTING"); len(idx) != 2 || !strings.HasPrefix(admin.Lineage.Gaps[idx[0]].Message, "2 of 4 upstream jobs") {
		w.t.Errorf("admin JOB_NOT_REPORTING: %+v", admin.Lineage.Gaps)
	}
	// the hidden job's latest run is the open one, whose events name no principal: only pub.j2's producer
	if idx := admin.kinds("PRODUCER_STALE"); len(idx) != 1 || !strings.Contains(admin.Lineage.Gaps[idx[0]].Message, "sec.prodj2") {
		w.t.Errorf("admin PRODUCER_STALE, want pub.j2's quiet producer: %+v", admin.Lineage.Gaps)
	}
	idx := narrow.kinds("JOB_NOT_REPORTING")
	if len(idx) != 1 || !strings.HasPrefix(narrow.Lineage.Gaps[idx[0]].Message, "1 of 2 upstream jobs") ||
		!strings.Contains(narrow.Lineage.Gaps[idx[0]].Message, "pub.never") {
		w.t.Errorf("narrow JOB_NOT_REPORTING: %+v", narrow.Lineage.Gaps)
	}
	if n := len(narrow.kinds("PRODUCER_STALE")); n != 0 {
		w.t.Errorf("narrow sees %d PRODUCER_STALE gaps of other producers", n)
	}
	if c := narrow.Lineage.Coverage; c == nil || c.WithExpectedWriter != 2 || c.Reporting != 1 {
		w.t.Errorf("narrow coverage %+v, want pub.mid and pub.out with a visible expected writer, pub.mid reporting", c)
	}
}

// A producer that reports again is not quiet on the next answer, although the producers' health was read (and
// is reused for a minute) while it was quiet: its new run's events count.
func TestProducerBackIsNotStale(t *testing.T) {
	h := newHarness(t, withConfig(lineage.Config{TrustGapsTTL: -1}))
	fx := h.fx
	src, dst := fx.Dataset("b.src"), fx.Dataset("b.dst")
	j := fx.Job("b.job")
	fx.Flow(j, []string{src}, []string{dst})
	prod := fx.NS + "-backprod"
	var daily []time.Time
	for d := 12; d >= 5; d-- {
		daily = append(daily, fx.Now.Add(-time.Duration(d)*24*time.Hour))
	}
	producerRun(fx, j, prod, daily)
	vars := map[string]any{"ns": fx.NS, "name": "b.src", "dir": "DOWNSTREAM", "depth": 1}
	var a gapsAnswer
	h.mustQuery(gapsLineageQ, vars, &a)
	if len(a.kinds("PRODUCER_STALE")) != 1 {
		t.Fatalf("quiet producer: %+v", a.Lineage.Gaps)
	}
	producerRun(fx, j, prod, []time.Time{fx.Now.Add(-time.Minute)})
	var b gapsAnswer
	h.mustQuery(gapsLineageQ, vars, &b)
	if n := len(b.kinds("PRODUCER_STALE")); n != 0 {
		t.Errorf("a producer that reported a minute ago is still stale: %+v", b.Lineage.Gaps)
	}
}
