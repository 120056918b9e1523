package project

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// The tag history is derived from the tag log whatever order the facets were merged in, a replayed facet is kept
// once, and an empty facet closes every tag.
func TestTagHistoryFromTheLog(t *testing.T) {
	pii := []olevent.Tag{{Key: "pii", Field: "email", Source: "dbt"}, {Key: "confidential"}}
	obs := []tagObs{{T: 30, E: "c", V: pii[1:]}, {T: 10, E: "a", V: pii}, {T: 50, E: "d"}, {T: 10, E: "a", V: pii}}
	st := &dsState{}
	st.mergeTags(obs)
	if len(st.Tags) != 3 {
		t.Fatalf("tag log %+v: the replayed facet should be kept once", st.Tags)
	}
	want := []graph.TagInterval{{Name: "confidential", ValidFrom: 10, ValidTo: 50, EventID: "a"},
		{Name: "email:pii", Source: "dbt", ValidFrom: 10, ValidTo: 30, EventID: "a"}}
	if got := tagHistory(st.Tags); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history %+v, want %+v", got, want)
	}
	back := &dsState{}
	for _, o := range slices.Backward(obs) {
		back.mergeTags([]tagObs{o})
	}
	if fmt.Sprint(tagHistory(back.Tags)) != fmt.Sprint(want) {
		t.Fatalf("merged backwards: %+v", tagHistory(back.Tags))
	}
}

// What a tags facet costs the dataset's stored state: a producer repeating the same two tags on every run (dbt)
// adds one tag-log entry per run to the snapshot (event ids as random as content ids) (the history does not grow). The figure is logged; the bound is
// generous, to catch a form that stores the whole list twice or the history per entry.
func TestTagLogCostPerFacet(t *testing.T) {
	tags := []olevent.Tag{{Key: "pii", Value: "true", Field: "email", Source: "dbt"}, {Key: "confidential", Source: "dbt"}}
	size := func(n int) (int, int) {
		st := &dsState{Meta: map[string]stamped{}, Facets: map[string]stamped{}}
		for i := range n {
			st.mergeTags([]tagObs{{T: 1_764_000_000_000 + int64(i)*86_400_000, E: fmt.Sprintf("sha256:%x", sha256.Sum256([]byte{byte(i), byte(i >> 8)})), V: tags}})
		}
		b, err := st.encode()
		if err != nil {
			t.Fatal(err)
		}
		props := map[string]any{}
		tagProps(st, props)
		return len(b), len(props["tagHistory"].(string))
	}
	s1, h1 := size(1)
	s366, h366 := size(366)
	per := float64(s366-s1) / 365
	t.Logf("snapshot (compressed projState) %d B with 1 facet, %d B with 366: %.1f B per repeated facet; tagHistory %d B, %d B",
		s1, s366, per, h1, h366)
	if h1 != h366 {
		t.Errorf("the history grew with repeated identical facets: %d -> %d B", h1, h366)
	}
	if per > 160 {
		t.Errorf("%.1f B of snapshot per repeated tags facet", per)
	}
}

// Each interval records the principal of the event that set it (projection version 8, ADR 0086), and a version-7
// log entry (no principal) gets it when the upgrade merges the archived facet again: kept once.
func TestTagIntervalsRecordWhoSetThem(t *testing.T) {
	pii := []olevent.Tag{{Key: "pii"}}
	st := &dsState{}
	st.mergeTags([]tagObs{{T: 10, E: "a", V: pii}, {T: 20, E: "b", V: pii[:0]}, {T: 30, E: "c", B: "svc-dbt", V: pii}})
	st.mergeTags([]tagObs{{T: 10, E: "a", B: "alice", V: pii}}) // the archive's principal for event a
	if len(st.Tags) != 3 || st.Tags[0].B != "alice" {
		t.Fatalf("tag log %+v: event a once, with its principal", st.Tags)
	}
	st.mergeTags([]tagObs{{T: 10, E: "a", B: "alice", V: pii}}) // a replay changes nothing
	want := []graph.TagInterval{{Name: "pii", ValidFrom: 10, ValidTo: 20, EventID: "a", By: "alice"},
		{Name: "pii", ValidFrom: 30, ValidTo: graph.OpenEnd, EventID: "c", By: "svc-dbt"}}
	if got := tagHistory(st.Tags); len(st.Tags) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history %+v, want %+v", got, want)
	}
}
