// Package agreement answers where a dbt project's declarations and the runs' observations disagree
// (docs/declared-lineage.md "Declared versus observed", ADR 0069): the declared legs (a node's job reading a
// dependency's relation, writing its own) that no run observed within the leg's staleness threshold (DESIGN.md:
// 3 times the job's usual interval between runs, at least a day: the lineage rule), the legs the runs observe
// that the declaration does not state, and the dbt tests declared that no run of the project's tests reported
// (dbt-ol's dataQualityAssertions facet on what a test run read, or a run of the test's own job).
//
// Compare is pure; Checker reads the graph (one read of the nodes' jobs and their legs, one of the test jobs'
// latest runs) and keeps only what the caller may see (one batched check of the jobs, one of the datasets): a
// leg on a hidden dataset, a node whose job is hidden, the tests of a node whose test job is hidden, are named
// and counted nowhere, and the answer says permissionsFiltered.
package agreement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
	"github.com/headwater-data/headwater/trust/rules"
)

// MaxItems bounds each list of an answer; more make it partial.
const MaxItems = 200

// Config is the staleness rule of an observed leg (lineage.Config's StaleMin and StaleFactor).
type Config struct {
	StaleMin    time.Duration
	StaleFactor float64
}

// Leg is one INPUT_TO or OUTPUT_TO of a node's job, of one evidence kind.
type Leg struct {
	DatasetKey, Namespace, Name string
	// Direction is api.LegInput or api.LegOutput; Kind OBSERVED or DECLARED.
	Direction, Kind string
	// ValidTo is the end of the leg's latest interval (graph.OpenEnd while current), LastObservedAt its latest
	// evidence, both epoch milliseconds.
	ValidTo, LastObservedAt int64
}

// Job is a dbt node's job (role NODE) as the graph holds it.
type Job struct {
	Key, Name, UniqueID string
	// FirstSeenAt, LastSeenAt (epoch ms) and Runs give its usual interval between runs.
	FirstSeenAt, LastSeenAt, Runs int64
	Legs                          []Leg
}

// Assertion is one entry of a dataQualityAssertions facet dbt-ol sent for a test run.
type Assertion struct {
	Assertion, Name, Column string
}

// Tests are what the graph shows of a node's tests having run: the assertions of the latest runs of its test
// job (role TESTS), and the unique ids of its tests that have a job of their own with a run.
type Tests struct {
	Assertions []Assertion
	Ran        map[string]bool
}

// Compare checks the candidate's nodes against their jobs (by unique id) and their tests' runs (by the node's
// unique id), at now. Seeds are not checked (dbt-ol reports no seed runs). A node without a job is not checked (the diff has it as added); a declared leg the job has
// no leg of at all (neither declared by an import nor observed) is not checked either (the diff's added
// dependency). jobs and tests hold only what the caller may see: a node with no entry in tests is not checked
// for tests (its test job is hidden), an empty entry means no test run at all.
func Compare(nodes []declare.DeclaredNode, jobs map[string]*Job, tests map[string]*Tests, now time.Time, cfg Config) *api.DeclaredVersusObserved {
	out := &api.DeclaredVersusObserved{DeclaredNotObserved: []*api.EdgeDisagreement{},
		ObservedNotDeclared: []*api.EdgeDisagreement{}, TestsNotObserved: []*api.TestDisagreement{}}
	nowMs := now.UnixMilli()
	for _, n := range nodes {
		j := jobs[n.UniqueID]
		if j == nil || strings.HasPrefix(n.UniqueID, dbtmanifest.TypeSeed+".") {
			continue // seeds: dbt-ol reports no seed runs, so every declared seed leg would read "never observed"
		}
		declared := map[string]bool{api.LegOutput + "|" + n.Dataset: true}
		for _, in := range n.Inputs {
			declared[api.LegInput+"|"+in] = true
		}
		observed, known := map[string]Leg{}, map[string]bool{}
		for _, l := range j.Legs {
			k := l.Direction + "|" + l.Name
			known[k] = true
			if l.Kind == string(api.Observed) {
				if o, ok := observed[k]; !ok || l.ValidTo > o.ValidTo {
					observed[k] = l
				}
			}
		}
		threshold := rules.StaleThreshold(time.UnixMilli(j.FirstSeenAt), time.UnixMilli(j.LastSeenAt), j.Runs, cfg.StaleFactor, cfg.StaleMin)
		legs := append([]string{api.LegOutput + "|" + n.Dataset}, prefixed(api.LegInput, n.Inputs)...)
		for _, k := range legs {
			if !known[k] {
				continue
			}
			out.EdgesChecked++
			dir, name, _ := strings.Cut(k, "|")
			o, seen := observed[k]
			d := &api.EdgeDisagreement{UniqueID: n.UniqueID, Job: j.Name, Dataset: name, Direction: dir}
			switch {
			case !seen:
				d.Kind = api.DisagreeNeverObserved
				d.Message = fmt.Sprintf("declared, never observed: no run of %s %s %s", j.Name, verb(dir), name)
			case o.ValidTo <= nowMs:
				d.Kind = api.DisagreeNoLongerObserved
				d.Namespace = o.Namespace
				ago := days(now, o.LastObservedAt)
				d.LastObservedAt, d.DaysAgo = at(o.LastObservedAt), &ago
				d.Message = fmt.Sprintf("declared, no longer observed: a complete run of %s omitted it at %s (last observed %d days ago)",
					j.Name, time.UnixMilli(o.ValidTo).UTC().Format("2006-01-02 15:04 MST"), ago)
			case nowMs-o.LastObservedAt > threshold.Milliseconds():
				d.Kind = api.DisagreeStale
				d.Namespace = o.Namespace
				ago, hours := days(now, o.LastObservedAt), int(threshold/time.Hour)
				d.LastObservedAt, d.DaysAgo, d.StaleAfterHours = at(o.LastObservedAt), &ago, &hours
				d.Message = fmt.Sprintf("declared, observed %d days ago: stale (not re-observed within %s: %g × the job's usual interval between runs, at least %s)",
					ago, rules.Age(threshold), cfg.StaleFactor, rules.Age(cfg.StaleMin))
			default:
				continue
			}
			if d.Namespace == "" {
				d.Namespace = namespaceOf(j.Legs, k)
			}
			out.DeclaredNotObserved = append(out.DeclaredNotObserved, d)
		}
		for k, o := range observed {
			if declared[k] || o.ValidTo <= nowMs {
				continue
			}
			ago := days(now, o.LastObservedAt)
			out.ObservedNotDeclared = append(out.ObservedNotDeclared, &api.EdgeDisagreement{Kind: api.DisagreeNotDeclared,
				UniqueID: n.UniqueID, Job: j.Name, Namespace: o.Namespace, Dataset: o.Name, Direction: o.Direction,
				LastObservedAt: at(o.LastObservedAt), DaysAgo: &ago,
				Message: fmt.Sprintf("observed %d days ago, not declared: runs of %s %s %s; the manifest does not declare it", ago, j.Name, verb(o.Direction), o.Name)})
		}
		ts := tests[n.UniqueID]
		if len(n.Tests) == 0 || ts == nil || !known[api.LegOutput+"|"+n.Dataset] {
			continue
		}
		for _, t := range n.Tests {
			out.TestsChecked++
			if ts.ran(t) {
				continue
			}
			td := &api.TestDisagreement{UniqueID: t.UniqueID, Name: t.Name, Model: n.UniqueID, Dataset: n.Dataset,
				Message: fmt.Sprintf("declared, never observed running: no test run of %s reported %s", n.UniqueID, t.Name)}
			if t.Column != "" {
				c := t.Column
				td.Column = &c
			}
			out.TestsNotObserved = append(out.TestsNotObserved, td)
		}
	}
	sortEdges(out.DeclaredNotObserved)
	sortEdges(out.ObservedNotDeclared)
	slices.SortFunc(out.TestsNotObserved, func(a, b *api.TestDisagreement) int { return strings.Compare(a.UniqueID, b.UniqueID) })
	if len(out.DeclaredNotObserved) > MaxItems {
		out.DeclaredNotObserved, out.Partial = out.DeclaredNotObserved[:MaxItems], true
	}
	if len(out.ObservedNotDeclared) > MaxItems {
		out.ObservedNotDeclared, out.Partial = out.ObservedNotDeclared[:MaxItems], true
	}
	if len(out.TestsNotObserved) > MaxItems {
		out.TestsNotObserved, out.Partial = out.TestsNotObserved[:MaxItems], true
	}
	return out
}

// ran says whether a run reported the test: a run of its own job, or an assertion of the node's test runs
// named as the test (dbt-ol 1.3x and later send the test's name), else, for an assertion without a name, the
// same generic test on the same column.
func (ts *Tests) ran(t declare.DeclaredTest) bool {
	if ts.Ran[t.UniqueID] {
		return true
	}
	for _, a := range ts.Assertions {
		if a.Name != "" && a.Name == t.Name {
			return true
		}
		if a.Name == "" && t.TestName != "" && a.Assertion == t.TestName && strings.EqualFold(a.Column, t.Column) {
			return true
		}
	}
	return false
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + "|" + n
	}
	return out
}

func namespaceOf(legs []Leg, k string) string {
	for _, l := range legs {
		if l.Direction+"|"+l.Name == k {
			return l.Namespace
		}
	}
	return ""
}

func verb(dir string) string {
	if dir == api.LegOutput {
		return "wrote"
	}
	return "read"
}

func days(now time.Time, ms int64) int {
	return max(0, int(now.Sub(time.UnixMilli(ms))/(24*time.Hour)))
}

func at(ms int64) *time.Time {
	t := time.UnixMilli(ms).UTC()
	return &t
}

func sortEdges(es []*api.EdgeDisagreement) {
	slices.SortFunc(es, func(a, b *api.EdgeDisagreement) int {
		return strings.Compare(a.UniqueID+"|"+a.Direction+"|"+a.Dataset, b.UniqueID+"|"+b.Direction+"|"+b.Dataset)
	})
}
