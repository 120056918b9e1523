package project

import (
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// tagged is d with a tags facet listing tags ("key", "key=value", "field:key"; an empty list removes them all).
func tagged(d olevent.Dataset, tags ...string) olevent.Dataset {
	d.Tags = []olevent.Tag{}
	for _, s := range tags {
		t := olevent.Tag{Source: "governance"}
		if i := indexByte(s, ':'); i >= 0 {
			t.Field, s = s[:i], s[i+1:]
		}
		if i := indexByte(s, '='); i >= 0 {
			t.Key, t.Value = s[:i], s[i+1:]
		} else {
			t.Key = s
		}
		d.Tags = append(d.Tags, t)
	}
	return d
}

func indexByte(s string, b byte) int {
	for i := range len(s) {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// tagRow reads a dataset's row as the readers do (tags, tagHistory).
func (s *scen) tagRow(name string) graph.DatasetRow {
	s.t.Helper()
	r := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.tags AS tags, d.tagHistory AS h, d.tagNames AS names`,
		map[string]any{"k": s.dsKey(name)})
	row := graph.DatasetRow{TagHistory: graph.ParseTagHistory(asStr(r["h"]))}
	for _, t := range r["tags"].([]any) {
		row.Tags = append(row.Tags, t.(string))
	}
	return row
}

// The tags facets of a dataset's owner are temporal (projection version 6): a tag added at 20 s and removed at
// 40 s (the latest facet no longer lists it) is in force in [20 s, 40 s) only, with its source and the event
// that set it; the current list (Dataset.tags) is the latest facet's; an empty facet removes every tag; and the
// history is the same whatever order the facets arrive in.
func TestScenarioTagsAreTemporal(t *testing.T) {
	s := newScen(t)
	evs := []olevent.Event{
		s.dsEv("t1", 10, tagged(s.ds("customers"), "confidential")),
		s.dsEv("t2", 20, tagged(s.ds("customers"), "confidential", "email:pii=true")),
		s.dsEv("t3", 40, tagged(s.ds("customers"), "confidential")),
		s.dsEv("t4", 60, tagged(s.ds("customers"))),
	}
	check := func(label string) string {
		t.Helper()
		row := s.tagRow("customers")
		want := map[int][]string{5: nil, 10: {"confidential"}, 30: {"confidential", "email:pii=true"},
			40: {"confidential"}, 59: {"confidential"}, 60: nil}
		for sec, tags := range want {
			if got := row.TagsAt(s.ms(sec)); !equalStrs(got, tags) {
				t.Errorf("%s: tags at %d s = %v, want %v", label, sec, got, tags)
			}
		}
		if len(row.Tags) != 0 {
			t.Errorf("%s: current tags %v after the empty facet, want none", label, row.Tags)
		}
		iv, ok := row.TagAt("email:pii=true", s.ms(30))
		if !ok || iv.ValidFrom != s.ms(20) || iv.ValidTo != s.ms(40) || iv.Source != "governance" || iv.EventID != s.ns+"-t2" {
			t.Errorf("%s: email interval %+v %v", label, iv, ok)
		}
		return s.dump()
	}
	s.apply(evs...)
	want := check("in order")

	s.wipe()
	s.p = newScen(t).p // a new process: nothing in memory
	s.apply(evs[3], evs[1])
	s.apply(evs[0], evs[2])
	if got := check("shuffled"); got != want {
		t.Fatalf("the tag history depends on arrival order:\n%s", diffLines(want, got))
	}
}

// A graph written by projection version 5 kept the latest tags facet only; UpgradeTags rebuilds the history from
// the archived events (their datasets bound as the stored events were), keeping the node and its other
// properties, and is idempotent.
func TestUpgradeTagsRebuildsTheHistoryOfAVersion5Graph(t *testing.T) {
	s := newScen(t)
	jobTagged := func(e *olevent.Event) { e.Job.Tags = []olevent.Tag{{Key: "owner", Value: "crm"}, {Key: "nightly"}} }
	evs := []olevent.Event{
		s.dsEv("u1", 10, tagged(s.ds("orders"), "pii")),
		s.dsEv("u2", 30, tagged(s.ds("orders"), "confidential")),
		s.runEv("w", olevent.TypeComplete, 5, "load", "r1", nil, []olevent.Dataset{withSchema(s.ds("orders"), "id")}, jobTagged),
	}
	s.apply(evs[2])
	s.apply(evs[:2]...)
	if j := s.one(`MATCH (j:Job {key: $k}) RETURN j.jobTags AS t`, map[string]any{"k": s.jobKey("load")}); j["t"] != `["nightly","owner=crm"]` {
		t.Fatalf("job tags %v", j["t"])
	}
	want := s.dump()

	// What version 5 left: the latest tags, no history, no tag log in the state.
	s.query(`MATCH (d:Dataset {key: $k}) SET d.normVersion = '5' REMOVE d.tagHistory, d.tagNames`,
		map[string]any{"k": s.dsKey("orders")})
	s.query(`MATCH (j:Job {key: $k}) REMOVE j.jobTags, j.stampT_jobTags, j.stampE_jobTags`, map[string]any{"k": s.jobKey("load")})
	s.p = newScen(t).p
	st := s.state("orders")
	st.Tags = nil
	s.saveState("orders", st)
	if h := s.tagRow("orders").TagHistory; h != nil {
		t.Fatalf("downgrade left a history: %v", h)
	}

	envs := make([]Envelope, 0, len(evs))
	for _, e := range evs {
		envs = append(envs, Envelope{Event: e, Principal: testPrincipal, Source: "replay"})
	}
	for range 2 {
		if n, err := s.p.UpgradeTags(s.ctx, envs, s.ns); err != nil || n != (TagsUpgraded{Datasets: 1, Jobs: 1}) {
			t.Fatalf("upgrade tags: %+v %v", n, err)
		}
	}
	if got := s.dump(); got != want {
		t.Fatalf("upgraded graph differs from a version-6 projection:\n%s", diffLines(want, got))
	}
	row := s.tagRow("orders")
	if got := row.TagsAt(s.ms(20)); !equalStrs(got, []string{"pii"}) {
		t.Fatalf("tags at 20 s after the upgrade: %v", got)
	}
	// the next event folds onto the upgraded state
	s.p = newScen(t).p
	s.apply(s.dsEv("u3", 50, tagged(s.ds("orders"), "pii")))
	if got := s.tagRow("orders").TagsAt(s.ms(40)); !equalStrs(got, []string{"confidential"}) {
		t.Fatalf("tags at 40 s after a later event: %v", got)
	}
}

func equalStrs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// state reads a dataset's saved fold state (its projState snapshot).
func (s *scen) state(name string) *dsState {
	s.t.Helper()
	r := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.projState AS st`, map[string]any{"k": s.dsKey(name)})
	st, err := decodeState(r["st"])
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// saveState writes a dataset's fold state snapshot as it is.
func (s *scen) saveState(name string, st *dsState) {
	s.t.Helper()
	b, err := st.encode()
	if err != nil {
		s.t.Fatal(err)
	}
	s.query(`MATCH (d:Dataset {key: $k}) SET d.projState = $st`, map[string]any{"k": s.dsKey(name), "st": b})
}

// Job tags (ADR 0068) are the job tags facet of the job's latest event carrying one, whatever the arrival order.
func TestScenarioJobTagsAreTheLatestFacets(t *testing.T) {
	s := newScen(t)
	with := func(tags ...string) evMod {
		return func(e *olevent.Event) {
			for _, k := range tags {
				e.Job.Tags = append(e.Job.Tags, olevent.Tag{Key: k})
			}
		}
	}
	s.apply(s.runEv("b", olevent.TypeComplete, 20, "load", "r2", nil, nil, with("pii-job", "nightly")))
	s.apply(s.runEv("a", olevent.TypeComplete, 10, "load", "r1", nil, nil, with("stale")))
	s.apply(s.runEv("c", olevent.TypeComplete, 30, "load", "r3", nil, nil)) // no facet: the tags stay
	if j := s.one(`MATCH (j:Job {key: $k}) RETURN j.jobTags AS t`, map[string]any{"k": s.jobKey("load")}); j["t"] != `["nightly","pii-job"]` {
		t.Fatalf("job tags %v, want the latest facet's", j["t"])
	}
}

// An empty job tags facet clears the job's tags from its event time (projection version 8, ADR 0086), whatever the
// arrival order; an earlier facet arriving after it does not bring them back, a later one does.
func TestScenarioAnEmptyJobTagsFacetClearsThem(t *testing.T) {
	s := newScen(t)
	with := func(tags ...string) evMod {
		return func(e *olevent.Event) {
			e.Job.Tags = []olevent.Tag{}
			for _, k := range tags {
				e.Job.Tags = append(e.Job.Tags, olevent.Tag{Key: k})
			}
		}
	}
	tags := func() any {
		return s.one(`MATCH (j:Job {key: $k}) RETURN j.jobTags AS t`, map[string]any{"k": s.jobKey("load")})["t"]
	}
	s.apply(s.runEv("b", olevent.TypeComplete, 20, "load", "r2", nil, nil, with())) // empty
	s.apply(s.runEv("a", olevent.TypeComplete, 10, "load", "r1", nil, nil, with("pii-job")))
	if got := tags(); got != `[]` {
		t.Fatalf("job tags %v after an empty facet at 20 and a tagged one at 10, want none ([])", got)
	}
	s.apply(s.runEv("c", olevent.TypeComplete, 30, "load", "r3", nil, nil, with("nightly")))
	if got := tags(); got != `["nightly"]` {
		t.Fatalf("job tags %v, want the facet at 30's", got)
	}
}
