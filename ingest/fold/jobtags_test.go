package fold

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/headwater-data/headwater/graph"
)

const minute = int64(60_000)

// jobTagSeq is ADR 0086's order-dependence case (t1 [a], t2 [b], t3 [a]) plus a repeat (t4 [a]), a clear (t5 []),
// a second principal's event under t3's id, and a duplicate of t3 (a replay).
func jobTagSeq() []JobTagEntry {
	return []JobTagEntry{
		{T: 1 * minute, E: "e1", B: "dbt", V: []string{"a"}},
		{T: 2 * minute, E: "e2", B: "dbt", V: []string{"b"}},
		{T: 3 * minute, E: "e3", B: "dbt", V: []string{"a"}},
		{T: 3 * minute, E: "e3", B: "airflow", V: []string{"a", "c"}},
		{T: 4 * minute, E: "e4", B: "dbt", V: []string{"a"}},
		{T: 5 * minute, E: "e5", B: "dbt", V: []string{}},
		{T: 3 * minute, E: "e3", B: "dbt", V: []string{"a"}}, // replay of e3
	}
}

func permutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

func inOrder(seq []JobTagEntry) JobTagLog {
	s := append([]JobTagEntry(nil), seq...)
	var l JobTagLog
	for len(s) > 0 {
		best := 0
		for i := range s {
			if jobTagLess(s[i], s[best]) {
				best = i
			}
		}
		l = l.Merge([]JobTagEntry{s[best]})
		s = append(s[:best], s[best+1:]...)
	}
	return l
}

// TestJobTagLogIsTheSameInEveryArrivalOrder: every arrival order (one entry a batch, 5040 of them) ends with the
// log and history in-order application gives, t1/t3/t2 included; and the history is the in-order one: [a] from
// t1 to t2, again from t3 to t5.
func TestJobTagLogIsTheSameInEveryArrivalOrder(t *testing.T) {
	seq := jobTagSeq()
	want := inOrder(seq)
	wantHist := want.History()
	for _, p := range permutations(len(seq)) {
		var l JobTagLog
		for _, i := range p {
			l = l.Merge([]JobTagEntry{seq[i]})
		}
		if !reflect.DeepEqual(l, want) {
			t.Fatalf("order %v: log %+v, in order %+v", p, l, want)
		}
		if h := l.History(); !reflect.DeepEqual(h, wantHist) {
			t.Fatalf("order %v: history %+v, in order %+v", p, h, wantHist)
		}
	}
	// the batch as one merge too
	if l := JobTagLog(nil).Merge(seq); !reflect.DeepEqual(l, want) {
		t.Fatalf("one batch: %+v, in order %+v", l, want)
	}
	if len(want) != 6 {
		t.Fatalf("the replay of e3 is kept once: %d entries, want 6", len(want))
	}
	wantA := []graph.TagInterval{
		{Name: "a", ValidFrom: 1 * minute, ValidTo: 2 * minute, EventID: "e1", By: "dbt"},
		{Name: "a", ValidFrom: 3 * minute, ValidTo: 5 * minute, EventID: "e3", By: "airflow"},
		{Name: "b", ValidFrom: 2 * minute, ValidTo: 3 * minute, EventID: "e2", By: "dbt"},
		{Name: "c", ValidFrom: 3 * minute, ValidTo: 3 * minute, EventID: "e3", By: "airflow"},
	}
	if !reflect.DeepEqual(wantHist, wantA) {
		t.Fatalf("history %+v, want %+v", wantHist, wantA)
	}
	if e, _ := want.Latest(); len(e.V) != 0 || e.E != "e5" {
		t.Fatalf("latest %+v: the empty facet at t5 clears the tags", e)
	}
}

// TestJobTagLogAReplayChangesNothing: merging the log's own entries again (a replay) leaves it as it is.
func TestJobTagLogAReplayChangesNothing(t *testing.T) {
	l := JobTagLog(nil).Merge(jobTagSeq())
	if again := l.Merge(jobTagSeq()); !reflect.DeepEqual(again, l) {
		t.Fatalf("replay changed the log: %+v, was %+v", again, l)
	}
}

// TestJobTagLogAcrossTheWindow: entries older than JobTagWindow are compacted into change points (a repeat is
// dropped), those inside kept in full; a late facet inside the window is exact, one older than it is folded
// against the change points (ADR 0090's one inexactness).
func TestJobTagLogAcrossTheWindow(t *testing.T) {
	day := 24 * 60 * minute
	seq := []JobTagEntry{
		{T: 0, E: "e0", V: []string{"a"}},
		{T: 2 * minute, E: "e2", V: []string{"a"}}, // a repeat: dropped once out of the window
		{T: 10 * day, E: "e10", V: []string{"a"}},
		{T: 10*day + 2*minute, E: "e12", V: []string{"a"}},
	}
	l := JobTagLog(nil).Merge(seq)
	if got := len(l); got != 3 {
		t.Fatalf("%d entries %+v, want 3: e2 repeats e0 and is older than the window", got, l)
	}
	// a late facet inside the window splits the run exactly: [a] resumes at e12
	in := l.Merge([]JobTagEntry{{T: 10*day + minute, E: "e11", V: []string{"b"}}})
	if !reflect.DeepEqual(in, inOrder(append(seq, JobTagEntry{T: 10*day + minute, E: "e11", V: []string{"b"}}))) {
		t.Fatalf("late facet inside the window: %+v differs from in-order application", in)
	}
	// a late facet older than the window: [b] stays in force until the next change point (e10), where in-order
	// replay reopens [a] at e2
	late := JobTagEntry{T: minute, E: "e1", V: []string{"b"}}
	out := l.Merge([]JobTagEntry{late}).History()
	want := []graph.TagInterval{
		{Name: "a", ValidFrom: 0, ValidTo: minute, EventID: "e0"},
		{Name: "a", ValidFrom: 10 * day, ValidTo: graph.OpenEnd, EventID: "e10"},
		{Name: "b", ValidFrom: minute, ValidTo: 10 * day, EventID: "e1"},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("late facet older than the window: %+v, want %+v", out, want)
	}
	exact := inOrder(append(seq, late)).History()
	if exact[1].ValidFrom != 2*minute {
		t.Fatalf("in order, [a] reopens at e2: %+v", exact)
	}
}

// TestJobTagLogIsBounded: a job sending the same facet on every event keeps at most JobTagWindowEntries entries
// plus its change points, whatever the count; the stored form writes a repeated list once.
func TestJobTagLogIsBounded(t *testing.T) {
	var l JobTagLog
	tags := []string{"dbt", "nightly", "owner=finance", "pii-approved"}
	for i := range 10_000 {
		if i == 5000 {
			tags = []string{"dbt", "nightly"}
		}
		l = l.Merge([]JobTagEntry{{T: int64(i) * 400, E: fmt.Sprintf("0190c3a4-7b5e-7d1a-9c3f-%012d", i), B: "dbt-prod", V: tags}})
	}
	if len(l) > JobTagWindowEntries+2 {
		t.Fatalf("%d entries after 10,000 facets, want at most %d", len(l), JobTagWindowEntries+2)
	}
	s := l.Encode()
	back, err := DecodeJobTagLog(s)
	if err != nil || !reflect.DeepEqual(back, l) {
		t.Fatalf("decode: %v, differs %v", err, !reflect.DeepEqual(back, l))
	}
	t.Logf("10,000 facets (one every 400 ms): %d entries, %d bytes stored", len(l), len(s))
	if h := l.History(); len(h) != 4 {
		t.Fatalf("history %+v", h)
	}
}
