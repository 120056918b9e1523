package walk

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
)

func TestSelectIntervalAndIntersection(t *testing.T) {
	pub := map[string]bool{graph.PubPublished: true}
	r := &graph.Rel{Froms: []int64{0, 100}, Tos: []int64{50, graph.OpenEnd}, Pubs: []string{graph.PubPublished, graph.PubAttempted}}
	for _, tc := range []struct {
		t    int64
		ok   bool
		from int64
	}{{10, true, 0}, {50, false, 0}, {60, false, 0}, {150, false, 0}} {
		f, _, _, ok := selectInterval(r, tc.t, pub)
		if ok != tc.ok || (ok && f != tc.from) {
			t.Errorf("t=%d: ok=%v from=%d", tc.t, ok, f)
		}
	}
	all := map[string]bool{graph.PubPublished: true, graph.PubAttempted: true}
	if _, _, p, ok := selectInterval(r, 150, all); !ok || p != graph.PubAttempted {
		t.Errorf("includeAttempted at 150: %v %s", ok, p)
	}
	other := &graph.Rel{Froms: []int64{20}, Tos: []int64{120}, Pubs: []string{graph.PubPublished}}
	iv := pair{in: r, out: other}.intervals()
	if len(iv) != 2 || iv[0].ValidFrom.UnixMilli() != 20 || iv[0].ValidTo.UnixMilli() != 50 ||
		iv[1].ValidFrom.UnixMilli() != 100 || iv[1].ValidTo.UnixMilli() != 120 {
		t.Fatalf("intersection = %+v", iv)
	}
}

func TestStaleThreshold(t *testing.T) {
	ec := edgeCtx{staleMin: 24 * time.Hour, staleFactor: 3}
	day := int64(24 * time.Hour / time.Millisecond)
	for _, tc := range []struct {
		job  graph.JobBrief
		want time.Duration
	}{
		{graph.JobBrief{Runs: 1}, 24 * time.Hour},
		{graph.JobBrief{Runs: 11, FirstSeenAt: 0, LastSeenAt: 10 * day}, 72 * time.Hour},     // daily: 3 days
		{graph.JobBrief{Runs: 241, FirstSeenAt: 0, LastSeenAt: 10 * day}, 24 * time.Hour},    // hourly: floor of a day
		{graph.JobBrief{Runs: 3, FirstSeenAt: 0, LastSeenAt: 20 * day}, 30 * 24 * time.Hour}, // every 10 days
	} {
		if got := staleThreshold(&tc.job, ec); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.job, got, tc.want)
		}
	}
}

func TestLowestLevelPerDirection(t *testing.T) {
	frontier := []Entry{
		{Key: "a", Down: true, Depth: 2}, {Key: "b", Down: true, Depth: 1, Skip: 4}, {Key: "c", Down: true, Depth: 1},
		{Key: "d", Down: false, Depth: 3}, {Key: "e", Down: false, Depth: 4},
	}
	level, later := lowestLevel(frontier)
	keys := func(es []Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.Key)
		}
		return out
	}
	if got := keys(level); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("level = %v, want the depth-1 downstream and depth-3 upstream entries", got)
	}
	if got := keys(later); !slices.Equal(got, []string{"a", "e"}) {
		t.Fatalf("later = %v", got)
	}
}

func TestHoldKeepsDeeperEntriesOfDirectionsWithContinuations(t *testing.T) {
	w := &walk{deferred: []Entry{{Key: "hub", Down: true, Depth: 0, Skip: 2}}}
	next := []Entry{{Key: "x", Down: true, Depth: 1}, {Key: "y", Down: false, Depth: 1}}
	if got := w.hold(next); len(got) != 1 || got[0].Key != "y" {
		t.Fatalf("expandable now = %+v, want only the upstream entry", got)
	}
	if len(w.held) != 1 || w.held[0].Key != "x" {
		t.Fatalf("held = %+v, want the downstream entry behind the hub's continuation", w.held)
	}
	w = &walk{spec: walkSpec{oneShot: true}, deferred: w.deferred}
	if got := w.hold(next); len(got) != 2 || len(w.held) != 0 {
		t.Fatalf("one-shot walk held %+v", w.held)
	}
}

// TestHashSetPackRoundTrip: the sets a cursor carries survive packing (what the cursor round trip relies on).
func TestHashSetPackRoundTrip(t *testing.T) {
	h := hashSet{}
	h.add("x")
	h.add("y")
	got := unpack(h.pack())
	if !got.has("x") || !got.has("y") || got.has("z") || !slices.Equal(got.pack(), h.pack()) {
		t.Fatalf("unpacked %v from %v", got, h)
	}
}

// An edge with declared and observed legs through one job: its DECLARED evidence is the pair whose legs were both
// declared (source jobEvent, the declaration's event ids), not a declared leg joined to an observed one, whatever
// order the pairs come in (issue 20).
func TestDeclaredEvidenceIsTheDeclaredPair(t *testing.T) {
	open := []int64{graph.OpenEnd}
	rel := func(kind, deriv, id string, at int64) *graph.Rel {
		return &graph.Rel{Kind: kind, Froms: []int64{at}, Tos: open, Pubs: []string{graph.PubPublished},
			FirstObservedAt: at, LastObservedAt: at, Derivation: deriv, EventIDs: []string{id}}
	}
	declIn, declOut := rel(graph.KindDeclared, "jobEvent", "decl", 100), rel(graph.KindDeclared, "jobEvent", "decl", 100)
	obsIn, obsOut := rel(graph.KindObserved, "run", "run-in", 200), rel(graph.KindObserved, "run", "run-out", 200)
	pairs := []pair{{obsIn, obsOut}, {declIn, obsOut}, {obsIn, declOut}, {declIn, declOut}}
	ec := edgeCtx{asOf: 300, pubs: map[string]bool{graph.PubPublished: true}, staleMin: 24 * time.Hour, staleFactor: 3}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		var ps []pair
		for _, i := range order {
			ps = append(ps, pairs[i])
		}
		e, _ := buildEdge("a", "b", nil, ps, ec)
		var got []string
		for _, ev := range e.Evidence {
			got = append(got, string(ev.Kind)+"/"+*ev.Source+"/"+strings.Join(ev.EventIDs, ","))
		}
		if want := "OBSERVED/run/run-out DECLARED/jobEvent/decl"; strings.Join(got, " ") != want {
			t.Fatalf("order %v: evidence %v, want %s", order, got, want)
		}
	}
}
