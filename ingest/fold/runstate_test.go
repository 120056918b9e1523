package fold

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

func runRec(id, typ string, t int64, mods ...func(*RunEvent)) RunEvent {
	r := RunEvent{Order: Order{ID: id, Type: typ, Time: t, Recv: 1000 + t}, Kind: string(olevent.KindRun), Producer: "p",
		Job: RunJob{Key: "job"}}
	for _, m := range mods {
		m(&r)
	}
	return r
}

func facet(k, v string) func(*RunEvent) {
	return func(r *RunEvent) {
		if r.Facets == nil {
			r.Facets = map[string]json.RawMessage{}
		}
		r.Facets[k] = json.RawMessage(v)
	}
}

func deleted(k string) func(*RunEvent) { return func(r *RunEvent) { r.Deleted = append(r.Deleted, k) } }

func output(key, pub string) func(*RunEvent) {
	return func(r *RunEvent) {
		r.Outputs = append(r.Outputs, RunDataset{Key: key, Publication: pub})
	}
}

func input(key string) func(*RunEvent) {
	return func(r *RunEvent) { r.Inputs = append(r.Inputs, RunDataset{Key: key}) }
}

func summary(s *RunState) string {
	facets, _ := json.Marshal(s.Facets)
	b := fmt.Sprintf("state=%s conflicting=%v started=%v ended=%v facets=%s err=%q", s.State, s.Conflicting,
		deref(s.StartedAt), deref(s.EndedAt), facets, s.ErrorMsg)
	for _, k := range ordered.Keys(s.Inputs) {
		io := s.Inputs[k]
		b += fmt.Sprintf(" in:%s[%d,%d]", k, io.FirstAt, io.LastAt)
	}
	for _, k := range ordered.Keys(s.Outputs) {
		io := s.Outputs[k]
		b += fmt.Sprintf(" out:%s[%d,%d]%s", k, io.FirstAt, io.LastAt, io.Publication)
	}
	return b
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestFoldRunPermutations(t *testing.T) {
	C, F, A, S, R, O := olevent.TypeComplete, olevent.TypeFail, olevent.TypeAbort, olevent.TypeStart,
		olevent.TypeRunning, olevent.TypeOther
	cases := []struct {
		name string
		evs  []RunEvent
		want string
	}{
		{"start running complete other", []RunEvent{
			runRec("e1", S, 10, input("a"), facet("x", `1`)),
			runRec("e2", R, 20, facet("x", `2`)),
			runRec("e3", C, 30, output("b", ""), facet("y", `3`)),
			runRec("e4", O, 40, facet("z", `4`)),
		}, `state=COMPLETE conflicting=[] started=10 ended=30 facets={"x":2,"y":3,"z":4} err="" in:a[10,10] out:b[30,30]PUBLISHED`},
		{"late start after complete does not reopen", []RunEvent{
			runRec("e1", C, 30, output("b", "")),
			runRec("e2", S, 10, input("a")),
			runRec("e3", R, 35),
		}, `state=COMPLETE conflicting=[] started=10 ended=30 facets={} err="" in:a[10,10] out:b[30,30]PUBLISHED`},
		{"several starts: earliest", []RunEvent{runRec("e1", S, 20), runRec("e2", S, 10), runRec("e3", R, 25)},
			`state=RUNNING conflicting=[] started=10 ended=<nil> facets={} err=""`},
		{"fail with partial output is attempted", []RunEvent{
			runRec("e1", S, 10, output("b", "")),
			runRec("e2", F, 20, func(r *RunEvent) { r.ErrorMsg = "boom" }),
		}, `state=FAIL conflicting=[] started=10 ended=20 facets={} err="boom" out:b[10,10]ATTEMPTED`},
		{"abort", []RunEvent{runRec("e1", S, 10, output("b", "")), runRec("e2", A, 20)},
			`state=ABORT conflicting=[] started=10 ended=20 facets={} err="" out:b[10,10]ATTEMPTED`},
		{"two terminal states: latest wins, flagged", []RunEvent{
			runRec("e1", S, 10, output("b", "")), runRec("e2", F, 20), runRec("e3", C, 30),
		}, `state=COMPLETE conflicting=[COMPLETE FAIL] started=10 ended=30 facets={} err="" out:b[10,10]PUBLISHED`},
		{"same-time tie: terminal after non-terminal", []RunEvent{runRec("e1", C, 10), runRec("e2", R, 10)},
			`state=COMPLETE conflicting=[] started=<nil> ended=10 facets={} err=""`},
		{"retried complete keeps the first end", []RunEvent{runRec("e1", S, 5), runRec("e2", C, 10), runRec("e3", C, 15)},
			`state=COMPLETE conflicting=[] started=5 ended=10 facets={} err=""`},
		{"facet delete and older late facet", []RunEvent{
			runRec("e1", S, 10, facet("x", `"old"`), facet("y", `1`)),
			runRec("e2", R, 20, facet("x", `"new"`), deleted("y")),
			runRec("e3", O, 15, facet("x", `"late-but-older"`), facet("y", `2`)),
		}, `state=RUNNING conflicting=[] started=10 ended=<nil> facets={"x":"new"} err=""`},
		{"withheld output", []RunEvent{runRec("e1", S, 10), runRec("e2", C, 20, output("b", graph.PubWithheld))},
			`state=COMPLETE conflicting=[] started=10 ended=20 facets={} err="" out:b[20,20]WITHHELD`},
		{"other only adds metadata", []RunEvent{runRec("e1", O, 10, facet("m", `1`))},
			`state=OTHER conflicting=[] started=<nil> ended=<nil> facets={"m":1} err=""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ordered.Permutations(tc.evs, func(p []RunEvent) {
				got := summary(FoldRun("run", p))
				if got != tc.want {
					t.Fatalf("order %v:\n got %s\nwant %s", ids(p), got, tc.want)
				}
			})
		})
	}
}

func ids(evs []RunEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestMergeFacetsIsPerKeyLatest(t *testing.T) {
	evs := []RunEvent{runRec("a", "START", 1, facet("k", `1`)), runRec("b", "RUNNING", 2, deleted("k")),
		runRec("c", "RUNNING", 3, facet("k", `3`))}
	ordered.Permutations(evs, func(p []RunEvent) {
		sorted := make([]*RunEvent, len(p))
		for i := range p {
			sorted[i] = &p[i]
		}
		SortEvents(sorted)
		got := mergeFacets(sorted)
		if !reflect.DeepEqual(got, map[string]json.RawMessage{"k": json.RawMessage(`3`)}) {
			t.Fatalf("got %s", got)
		}
	})
}
