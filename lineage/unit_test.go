package lineage

import (
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
)

func TestCursorRoundTripAndBinding(t *testing.T) {
	c := cursorCodec{key: []byte("k")}
	h := hashSet{}
	h.add("x")
	st := cursorState{Subject: digest("alice"), Args: "args", AsOf: 42,
		Frontier: []frontierEntry{{Key: "k1", Kind: HopDataset, Down: true, Depth: 2, Skip: 3}}, Nodes: h.pack()}
	s, err := c.encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.decode(s, digest("alice"), "args")
	if err != nil || got.AsOf != 42 || got.Frontier[0] != st.Frontier[0] || !unpack(got.Nodes).has("x") {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for name, tc := range map[string]struct{ cur, sub, args string }{
		"other principal": {s, digest("bob"), "args"},
		"other args":      {s, digest("alice"), "args2"},
		"tampered":        {"e30" + s[3:], digest("alice"), "args"},
		"other key":       {mustEncode(t, cursorCodec{key: []byte("other")}, st), digest("alice"), "args"},
		"garbage":         {"nope", digest("alice"), "args"},
	} {
		if _, err := c.decode(tc.cur, tc.sub, tc.args); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func mustEncode(t *testing.T, c cursorCodec, st cursorState) string {
	s, err := c.encode(st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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

func TestConfigValidate(t *testing.T) {
	good := Config{CursorKey: "0123456789abcdef0123456789abcdef"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"short key":      {CursorKey: "short"},
		"depth over cap": {CursorKey: good.CursorKey, MaxDepth: DefaultMaxDepth + 1},
		"max nodes 1":    {CursorKey: good.CursorKey, MaxNodes: 1},
	} {
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if (Config{}).Validate() != nil {
		t.Fatal("an empty cursor key (random per process) must be accepted")
	}
	if d := good.WithDefaults(); d.MaxDepth != DefaultMaxDepth || d.FanOut != DefaultFanOut || d.MaxNodes != DefaultMaxNodes {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestLowestLevelPerDirection(t *testing.T) {
	frontier := []frontierEntry{
		{Key: "a", Down: true, Depth: 2}, {Key: "b", Down: true, Depth: 1, Skip: 4}, {Key: "c", Down: true, Depth: 1},
		{Key: "d", Down: false, Depth: 3}, {Key: "e", Down: false, Depth: 4},
	}
	level, later := lowestLevel(frontier)
	keys := func(es []frontierEntry) (out []string) {
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
	w := &walk{deferred: []frontierEntry{{Key: "hub", Down: true, Depth: 0, Skip: 2}}}
	next := []frontierEntry{{Key: "x", Down: true, Depth: 1}, {Key: "y", Down: false, Depth: 1}}
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
