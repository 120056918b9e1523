package project

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// jobTagOrders are every order of n items.
func jobTagOrders(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range jobTagOrders(n - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, append(append(append([]int{}, p[:i]...), n-1), p[i:]...))
		}
	}
	return out
}

// TestScenarioJobTagHistoryInEveryArrivalOrder projects a job tags sequence (t1 [a], t2 [b], t3 [a], t4 [a] a
// repeat, t5 [] a clear; ADR 0086's design note and ADR 0090) in every arrival order (120, one event a batch, the
// first event delivered again at the end: a duplicate), each order on its own job, and checks the stored log,
// history and current tags equal the in-order result: [a] from t1 to t2 and again from t3 (set by e3, not e4)
// to t5, [b] from t2 to t3, every interval naming the sender, and no tags now.
func TestScenarioJobTagHistoryInEveryArrivalOrder(t *testing.T) {
	s := newScen(t)
	facets := [][]string{{"a"}, {"b"}, {"a"}, {"a"}, {}}
	for o, order := range jobTagOrders(len(facets)) {
		job := fmt.Sprintf("tagged-%d", o)
		id := func(k int) string { return fmt.Sprintf("o%d-e%d", o, k+1) }
		ev := func(k int) olevent.Event {
			return s.runEv(id(k), olevent.TypeComplete, 10*(k+1), job, fmt.Sprintf("o%d-r%d", o, k+1), nil, nil,
				func(e *olevent.Event) {
					e.Job.Tags = []olevent.Tag{}
					for _, name := range facets[k] {
						e.Job.Tags = append(e.Job.Tags, olevent.Tag{Key: name})
					}
				})
		}
		for _, k := range order {
			s.apply(ev(k))
		}
		s.apply(ev(order[0])) // a duplicate changes nothing
		var want fold.JobTagLog
		for k, v := range facets {
			want = want.Merge([]fold.JobTagEntry{{T: s.ms(10 * (k + 1)), E: s.ns + "-" + id(k), B: testPrincipal, V: v}})
		}
		row := s.one(`MATCH (j:Job {key: $k}) RETURN j.jobTagLog AS log, j.jobTagHistory AS h, j.jobTags AS tags`,
			map[string]any{"k": s.jobKey(job)})
		got, err := fold.DecodeJobTagLog(asStr(row["log"]))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("order %v: stored log %+v (%v), in order %+v", order, got, err, want)
		}
		wantHist := []graph.TagInterval{
			{Name: "a", ValidFrom: s.ms(10), ValidTo: s.ms(20), EventID: s.ns + "-" + id(0), By: testPrincipal},
			{Name: "a", ValidFrom: s.ms(30), ValidTo: s.ms(50), EventID: s.ns + "-" + id(2), By: testPrincipal},
			{Name: "b", ValidFrom: s.ms(20), ValidTo: s.ms(30), EventID: s.ns + "-" + id(1), By: testPrincipal},
		}
		if h := graph.ParseTagHistory(asStr(row["h"])); !reflect.DeepEqual(h, wantHist) {
			t.Fatalf("order %v: stored history %+v, in order %+v", order, h, wantHist)
		}
		if row["tags"] != "[]" {
			t.Fatalf("order %v: jobTags %v, want [] (the clear at t5 is the latest)", order, row["tags"])
		}
	}
}
