package release

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func edge(kinds ...string) *api.LineageEdge {
	e := &api.LineageEdge{}
	for _, k := range kinds {
		kind, ago, _ := strings.Cut(k, "@")
		d, _ := time.ParseDuration(ago)
		e.Evidence = append(e.Evidence, api.Evidence{Kind: api.EvidenceKind(kind), ObservedAt: now.Add(-d)})
	}
	return e
}

// The evidence labels: declared only, observed N days ago (the latest observation), observed and declared.
func TestEvidence(t *testing.T) {
	for _, tc := range []struct {
		edges []*api.LineageEdge
		want  string
	}{
		{[]*api.LineageEdge{edge("DECLARED@1h")}, "declared only"},
		{[]*api.LineageEdge{edge("OBSERVED@50h")}, "observed 2 days ago"},
		{[]*api.LineageEdge{edge("OBSERVED@1h", "DECLARED@900h")}, "observed 0 days ago and declared"},
		{[]*api.LineageEdge{edge("OBSERVED@800h"), edge("OBSERVED@75h", "DECLARED@1h")}, "observed 3 days ago and declared"},
		{nil, "no evidence"},
	} {
		if got := Evidence(tc.edges, now).Label; got != tc.want {
			t.Errorf("%v: %q, want %q", tc.edges, got, tc.want)
		}
	}
}

func TestParseRule(t *testing.T) {
	if r, err := ParseRule("removed-column-read-within=30d"); err != nil || r != (Rule{RuleRemovedColumnRead, 30}) {
		t.Fatalf("%v %v", r, err)
	}
	for _, bad := range []string{"removed-column-read-within", "nope=3d", "removed-model-read-within=-1d", "removed-model-read-within=x"} {
		if _, err := ParseRule(bad); err == nil || !strings.HasPrefix(err.Error(), "fail-on: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The rules fail on a removed column read (column lineage) by a job observed within N days, and on a removed
// model's relation read directly by a reader observed within N days; declared-only or older readers pass.
func TestViolations(t *testing.T) {
	col := "amount"
	days := func(n int) *api.ImpactEvidence {
		return &api.ImpactEvidence{Observed: true, DaysAgo: &n, Label: "observed"}
	}
	r := &api.ReleaseImpact{Changes: []*api.ReleaseChange{
		{Kind: api.ChangeColumnRemoved, Column: &col, Summary: "column amount removed from a", Fields: []*api.AffectedField{
			{Dataset: "b", Field: "total", Job: "job_b", Evidence: days(3)},
			{Dataset: "c", Field: "x", Job: "job_c", Evidence: days(40)},
			{Dataset: "d", Field: "y", Evidence: &api.ImpactEvidence{Declared: true, Label: "declared only"}},
		}},
		{Kind: api.ChangeModelRemoved, Summary: "m removed", Datasets: []*api.AffectedDataset{
			{Name: "e", Direct: true, Jobs: []string{"job_e"}, Evidence: days(1)},
			{Name: "f", Direct: false, Jobs: []string{"job_f"}, Evidence: days(1)},
		}},
	}}
	got := Violations(r, []Rule{{RuleRemovedColumnRead, 30}, {RuleRemovedModelRead, 30}})
	want := []string{
		"removed-column-read-within=30d: column amount removed from a; read into b.total by job_b (observed)",
		"removed-model-read-within=30d: m removed; read by job_e into e (observed)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v := Violations(r, []Rule{{RuleRemovedColumnRead, 2}}); len(v) != 0 {
		t.Fatalf("a reader 3 days ago broke a 2-day rule: %v", v)
	}
}

// The declared-versus-observed section: each disagreement with its node, leg and detail; the tests never run; a
// report that agrees says so.
func TestMarkdownDeclaredVersusObserved(t *testing.T) {
	col := "total"
	r := &api.ReleaseImpact{Project: "p", Diff: &api.ReleaseDiff{}, DeclaredVersusObserved: &api.DeclaredVersusObserved{
		DeclaredNotObserved: []*api.EdgeDisagreement{{Kind: api.DisagreeStale, UniqueID: "model.p.a", Dataset: "w.x", Direction: api.LegInput, Message: "declared, observed 9 days ago: stale"}},
		ObservedNotDeclared: []*api.EdgeDisagreement{{Kind: api.DisagreeNotDeclared, UniqueID: "model.p.a", Dataset: "w.a2", Direction: api.LegOutput, Message: "observed 0 days ago, not declared"}},
		TestsNotObserved:    []*api.TestDisagreement{{Name: "not_null_a_total", Model: "model.p.a", Dataset: "w.a", Column: &col}},
		EdgesChecked:        3, TestsChecked: 2}}
	md := Markdown(r, nil)
	for _, want := range []string{"### Declared versus observed\n\n3 declared edges and 2 declared tests of the candidate checked against the runs.\n",
		"| declared, stale | `model.p.a` | reads `w.x` | declared, observed 9 days ago: stale |",
		"| observed, not declared | `model.p.a` | writes `w.a2` | observed 0 days ago, not declared |",
		"- `not_null_a_total` on `w.a` (`model.p.a`, column `total`)"} {
		if !strings.Contains(md, want) {
			t.Fatalf("the markdown lacks %q:\n%s", want, md)
		}
	}
	r.DeclaredVersusObserved = &api.DeclaredVersusObserved{EdgesChecked: 3}
	if md := Markdown(r, nil); !strings.Contains(md, "3 declared edges and 0 declared tests of the candidate checked against the runs: they agree.") {
		t.Fatalf("an agreeing report:\n%s", md)
	}
}

// An affected exposure is named with its type, label, owner, directness, evidence and url.
func TestMarkdownExposure(t *testing.T) {
	r := &api.ReleaseImpact{Project: "p", Diff: &api.ReleaseDiff{}, Changes: []*api.ReleaseChange{{Summary: "m removed",
		Datasets: []*api.AffectedDataset{{Name: "exposure.p.weekly", Direct: true, Distance: 1, Evidence: &api.ImpactEvidence{Label: "declared only"}}},
		Exposures: []*api.AffectedExposure{{UniqueID: "exposure.p.weekly", Name: "weekly", Label: "Weekly revenue", Type: "dashboard",
			URL: "https://bi.example.com/d/7", OwnerName: "Finance", OwnerEmail: "fin@example.com", Direct: true, Distance: 1,
			Evidence: &api.ImpactEvidence{Label: "declared only"}}}}}}
	want := "- dashboard **Weekly revenue** (`exposure.p.weekly`) owned by Finance <fin@example.com> is affected (direct, distance 1, declared only): https://bi.example.com/d/7\n"
	if md := Markdown(r, nil); !strings.Contains(md, want) {
		t.Fatalf("the markdown lacks %q:\n%s", want, md)
	}
}
