package agreement

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/declare"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

var cfg = Config{StaleMin: 24 * time.Hour, StaleFactor: 3}

func ms(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }

// leg is an open (or, with closed, closed an hour ago) leg last evidenced ago.
func leg(dir, kind, name string, ago time.Duration, closed bool) Leg {
	to := graph.OpenEnd
	if closed {
		to = ms(time.Hour)
	}
	return Leg{DatasetKey: "k_" + name, Namespace: "duckdb:///w", Name: name, Direction: dir, Kind: kind, ValidTo: to, LastObservedAt: ms(ago)}
}

func lines(a *api.DeclaredVersusObserved) []string {
	var out []string
	for _, e := range slices.Concat(a.DeclaredNotObserved, a.ObservedNotDeclared) {
		l := fmt.Sprintf("%s %s %s %s", e.Kind, e.UniqueID, e.Direction, e.Dataset)
		if e.DaysAgo != nil {
			l += fmt.Sprintf(" %dd", *e.DaysAgo)
		}
		if e.StaleAfterHours != nil {
			l += fmt.Sprintf(" after %dh", *e.StaleAfterHours)
		}
		out = append(out, l)
	}
	for _, t := range a.TestsNotObserved {
		out = append(out, "TEST "+t.UniqueID+" on "+t.Dataset)
	}
	return out
}

// The disagreements of one node with its job: a declared leg never observed, one observed but closed by a later
// complete run, one stale by the job's own rhythm (daily job: 3 days), one fresh; a leg observed and not declared;
// a declared leg the graph does not know (the diff's addition: not checked); tests reported by name, by
// assertion and column (older dbt-ol), by their own job, and one never reported; a seed is not checked (dbt-ol
// reports no seed runs) and a node only the candidate has neither.
func TestCompare(t *testing.T) {
	const O, D = "OBSERVED", "DECLARED"
	in, out := api.LegInput, api.LegOutput
	day := 24 * time.Hour
	node := declare.DeclaredNode{UniqueID: "model.p.m", Dataset: "w.m", Inputs: []string{"w.a", "w.b", "w.c", "w.d", "w.new"},
		Tests: []declare.DeclaredTest{
			{UniqueID: "test.p.by_name", Name: "not_null_m_id", TestName: "not_null", Column: "id"},
			{UniqueID: "test.p.by_assertion", Name: "unique_m_id", TestName: "unique", Column: "id"},
			{UniqueID: "test.p.own_job", Name: "singular_check"},
			{UniqueID: "test.p.never", Name: "accepted_values_m_status", TestName: "accepted_values", Column: "status"},
		}}
	job := &Job{Key: "jk", Name: "w.p.m", UniqueID: "model.p.m", FirstSeenAt: ms(10 * day), LastSeenAt: ms(0), Runs: 11,
		Legs: []Leg{
			leg(out, D, "w.m", 0, false), leg(out, O, "w.m", time.Hour, false),
			leg(in, D, "w.a", 0, false),                                 // never observed
			leg(in, D, "w.b", 0, false), leg(in, O, "w.b", 2*day, true), // closed
			leg(in, D, "w.c", 0, false), leg(in, O, "w.c", 4*day, false), // stale: daily job, 3 days
			leg(in, O, "w.d", 2*day, false),       // fresh within 3 days, observed only: agrees
			leg(in, O, "w.x", 5*time.Hour, false), // observed, not declared
			leg(in, O, "w.gone", time.Hour, true), // closed and undeclared: no disagreement
		}}
	tests := &Tests{Assertions: []Assertion{{Assertion: "not_null", Name: "not_null_m_id", Column: "id"}, {Assertion: "unique", Column: "ID"}},
		Ran: map[string]bool{"test.p.own_job": true}}
	seed := &Job{Key: "js", Name: "seed.p.s", UniqueID: "seed.p.s", Legs: []Leg{leg(out, D, "w.s", 0, false)}}
	got := Compare([]declare.DeclaredNode{node, {UniqueID: "model.p.only_candidate", Dataset: "w.o", Inputs: []string{"w.m"}},
		{UniqueID: "seed.p.s", Dataset: "w.s"}},
		map[string]*Job{"model.p.m": job, "seed.p.s": seed}, map[string]*Tests{"model.p.m": tests}, now, cfg)
	want := []string{
		"NEVER_OBSERVED model.p.m INPUT w.a",
		"NO_LONGER_OBSERVED model.p.m INPUT w.b 2d",
		"STALE model.p.m INPUT w.c 4d after 72h",
		"NOT_DECLARED model.p.m INPUT w.x 0d",
		"TEST test.p.never on w.m",
	}
	if g := lines(got); !slices.Equal(g, want) {
		t.Fatalf("disagreements:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	if got.EdgesChecked != 5 || got.TestsChecked != 4 || got.Partial {
		t.Fatalf("checked %d edges and %d tests (partial %v), want 5 (output, a, b, c, d; not w.new) and 4", got.EdgesChecked, got.TestsChecked, got.Partial)
	}
	if m := got.DeclaredNotObserved[2].Message; !strings.Contains(m, "stale (not re-observed within 3 days: 3 × the job's usual interval between runs, at least 24 h)") {
		t.Fatalf("the stale message: %s", m)
	}
	if got.DeclaredNotObserved[0].Namespace != "duckdb:///w" || got.DeclaredNotObserved[0].Job != "w.p.m" {
		t.Fatalf("the never-observed leg's namespace and job: %+v", got.DeclaredNotObserved[0])
	}
}

// A job seen once has the floor threshold (a day); a node whose tests entry is absent (its test job hidden) is not
// checked for tests, an empty entry (no test run at all) is, and the lists are bounded.
func TestCompareThresholdsTestsAndBounds(t *testing.T) {
	in := api.LegInput
	job := &Job{Key: "jk", Name: "j", UniqueID: "model.p.m", FirstSeenAt: ms(30 * time.Hour), LastSeenAt: ms(30 * time.Hour), Runs: 1,
		Legs: []Leg{leg(in, "OBSERVED", "w.a", 30*time.Hour, false), leg(in, "OBSERVED", "w.b", 20*time.Hour, false)}}
	node := declare.DeclaredNode{UniqueID: "model.p.m", Dataset: "w.m", Inputs: []string{"w.a", "w.b"},
		Tests: []declare.DeclaredTest{{UniqueID: "test.p.t", Name: "t"}}}
	got := Compare([]declare.DeclaredNode{node}, map[string]*Job{"model.p.m": job}, nil, now, cfg)
	if g := lines(got); !slices.Equal(g, []string{"STALE model.p.m INPUT w.a 1d after 24h"}) || got.TestsChecked != 0 {
		t.Fatalf("a job seen once: %v (tests checked %d)", g, got.TestsChecked)
	}
	// the output leg known: tests are checked; none ran
	job.Legs = append(job.Legs, leg(api.LegOutput, "DECLARED", "w.m", 0, false))
	got = Compare([]declare.DeclaredNode{node}, map[string]*Job{"model.p.m": job}, map[string]*Tests{"model.p.m": {}}, now, cfg)
	if g := lines(got); !slices.Contains(g, "TEST test.p.t on w.m") || got.TestsChecked != 1 {
		t.Fatalf("no test run at all: %v", g)
	}
	var many []string
	for i := range MaxItems + 5 {
		many = append(many, fmt.Sprintf("w.i%03d", i))
		job.Legs = append(job.Legs, leg(in, "DECLARED", many[i], 0, false))
	}
	node.Inputs = many
	got = Compare([]declare.DeclaredNode{node}, map[string]*Job{"model.p.m": job}, nil, now, cfg)
	if len(got.DeclaredNotObserved) != MaxItems || !got.Partial {
		t.Fatalf("bounded: %d entries, partial %v", len(got.DeclaredNotObserved), got.Partial)
	}
}

type seeOnly map[string]bool

func (s seeOnly) DatasetsByKeys(_ context.Context, keys []string, _ time.Time) (map[string]*api.Dataset, error) {
	out := map[string]*api.Dataset{}
	for _, k := range keys {
		if s[k] {
			out[k] = &api.Dataset{Key: k}
		}
	}
	return out, nil
}

func (s seeOnly) JobsByKeys(_ context.Context, keys []string) (map[string]*api.Job, error) {
	out := map[string]*api.Job{}
	for _, k := range keys {
		if s[k] {
			out[k] = &api.Job{}
		}
	}
	return out, nil
}

// What the caller may not see is dropped before the comparison: a node whose job or relation is hidden, a hidden
// dataset's legs, the
// tests of a node whose test job is hidden; the answer says it is filtered.
func TestVisibleDropsHidden(t *testing.T) {
	in := api.LegInput
	jobs := map[string]*Job{
		"model.p.a": {Key: "ja", UniqueID: "model.p.a", Legs: []Leg{leg(in, "DECLARED", "w.seen", 0, false), leg(in, "DECLARED", "w.hidden", 0, false)}},
		"model.p.b": {Key: "jb", UniqueID: "model.p.b"},
		"model.p.c": {Key: "ja", UniqueID: "model.p.c", Legs: []Leg{leg(api.LegOutput, "DECLARED", "w.hidden", 0, false)}},
	}
	tests := map[string]*Tests{"model.p.a": {}}
	c := &Checker{vis: seeOnly{"ja": true, "k_w.seen": true}}
	filtered, err := c.visible(context.Background(), jobs, tests, map[string][]string{"model.p.a": {"jt_hidden"}},
		[]string{"ja", "jb", "jt_hidden"}, []string{"k_w.seen", "k_w.hidden"}, now)
	if err != nil || !filtered {
		t.Fatalf("filtered %v, %v", filtered, err)
	}
	if len(jobs) != 1 || len(jobs["model.p.a"].Legs) != 1 || jobs["model.p.a"].Legs[0].Name != "w.seen" || len(tests) != 0 {
		t.Fatalf("kept: jobs %v, legs %v, tests %v", len(jobs), jobs["model.p.a"].Legs, tests)
	}
}
