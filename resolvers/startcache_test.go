package resolvers

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// withCountedReads makes the service read Neo4j through cd; the fixture keeps writing through the plain store.
func withCountedReads(cd *testenv.CountingDriver) option {
	return func(d *testDeps) {
		counted := *d.Store
		cd.DriverWithContext = counted.Driver
		counted.Driver = cd
		d.Store = &counted
	}
}

// movingClock is the fixture's clock plus an offset the test moves.
type movingClock struct {
	base   func() time.Time
	offset atomic.Int64
}

func (c *movingClock) Now() time.Time      { return c.base().Add(time.Duration(c.offset.Load())) }
func (c *movingClock) Add(d time.Duration) { c.offset.Add(int64(d)) }
func withMovingClock(c *movingClock) option {
	return func(d *testDeps) { c.base = d.Clock; d.Clock = c.Now }
}

const startQuery = `query($s: NodeRef!, $gran: Granularity) { lineage(start: $s, direction: DOWNSTREAM, depth: 2, granularity: $gran) {
  nodes { __typename ... on Dataset { name resolvedFrom { name } } ... on Field { path dataset { name } } } } }`

type startAnswer struct {
	Lineage struct {
		Nodes []struct {
			Typename     string `json:"__typename"`
			Name         string `json:"name"`
			Path         string `json:"path"`
			ResolvedFrom *struct {
				Name string `json:"name"`
			} `json:"resolvedFrom"`
			Dataset *struct {
				Name string `json:"name"`
			} `json:"dataset"`
		} `json:"nodes"`
	} `json:"lineage"`
}

// names are the answer's dataset names and field dataset.path names, sorted, with "<-old" after a dataset
// found under an old name.
func (a startAnswer) names() []string {
	var out []string
	for _, n := range a.Lineage.Nodes {
		switch {
		case n.Typename == "Field" && n.Dataset != nil:
			out = append(out, n.Dataset.Name+"."+n.Path)
		case n.ResolvedFrom != nil:
			out = append(out, n.Name+"<-"+n.ResolvedFrom.Name)
		default:
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (h *harness) start(name, gran string) (startAnswer, []gqlError) {
	h.t.Helper()
	var a startAnswer
	errs := h.query("", startQuery, map[string]any{"s": dsStart(h.fx.NS, name), "gran": gran}, &a)
	return a, errs
}

func (h *harness) mustStart(name, gran string) []string {
	h.t.Helper()
	a, errs := h.start(name, gran)
	if len(errs) > 0 {
		h.t.Fatalf("lineage from %s: %+v", name, errs)
	}
	return a.names()
}

func TestCachedLineageReadsNoNeo4jAndSeesRenamesAtOnce(t *testing.T) {
	rdb := realRedis(t)
	cd, clk := &testenv.CountingDriver{}, &movingClock{}
	h := newHarness(t, withRedis(rdb), withCountedReads(cd), withMovingClock(clk))
	fx := h.fx
	a, b := fx.Dataset("a"), fx.Dataset("b")
	j := fx.Job("j")
	fx.Flow(j, []string{a}, []string{b})

	if got := h.mustStart("a", "DATASET"); !eq(got, []string{"a", "b"}) {
		t.Fatalf("first answer %v", got)
	}
	if cd.Reads() == 0 {
		t.Fatal("the first answer must have read Neo4j (the counting seam is not in the path)")
	}
	hits := h.counter("headwater_cache_hits_total", cache.TierResults)
	if got := h.mustStart("a", "DATASET"); !eq(got, []string{"a", "b"}) {
		t.Fatalf("second answer %v", got)
	}
	if h.counter("headwater_cache_hits_total", cache.TierResults) <= hits {
		t.Fatal("the second identical query must be a results-tier hit")
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("a cached lineage answer read Neo4j %d times, want 0", n)
	}

	// Rename a -> a2; the projector bumps the dataset's generation and both names' (graph.NameGenKey). The
	// cached resolution of "a" is then never answered from: the entry keyed by that name was recorded under the
	// name's generation, so the next request resolves again and reports the rename at once.
	fx.Rename(a, "a", "a2", fx.Now.Add(-time.Second))
	bumped := []string{a, graph.NameGenKey(graph.DatasetIdent("", fx.NS, "a")), graph.NameGenKey(graph.DatasetIdent("", fx.NS, "a2"))}
	if err := cache.NewGenerations(rdb).Bump(context.Background(), bumped); err != nil {
		t.Fatal(err)
	}
	if got := h.mustStart("a2", "DATASET"); !eq(got, []string{"a2", "b"}) {
		t.Fatalf("new name right after the rename: %v", got)
	}
	if got := h.mustStart("a", "DATASET"); !eq(got, []string{"a2<-a", "b"}) {
		t.Fatalf("old name right after the rename: %v, want a2 resolved from a", got)
	}
	// Cached again, with no Neo4j read, and the rename still reported (the refreshed resolution was kept). The
	// clock stays put: moving it could cross a "now" bucket, which is a new key.
	cd.Reads()
	if got := h.mustStart("a", "DATASET"); !eq(got, []string{"a2<-a", "b"}) {
		t.Fatalf("old name, cached: %v", got)
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("the cached answer by the old name read Neo4j %d times, want 0", n)
	}
}

func TestStartCacheKeepsNoMissesAndNoFieldLists(t *testing.T) {
	rdb := realRedis(t)
	cd := &testenv.CountingDriver{}
	h := newHarness(t, withRedis(rdb), withCountedReads(cd))
	fx := h.fx
	a := fx.Dataset("a")
	fx.Field(a, "x", fx.T0, time.Time{})

	// NOT_FOUND is not kept: a dataset created right after is found on the next request (same instant).
	if _, errs := h.start("c", "DATASET"); len(errs) == 0 || errs[0].code() != "NOT_FOUND" {
		t.Fatalf("unknown dataset: %+v, want NOT_FOUND", errs)
	}
	fx.Dataset("c")
	if got := h.mustStart("c", "DATASET"); !eq(got, []string{"c"}) {
		t.Fatalf("dataset created after a miss: %v", got)
	}

	// Field lists are read on every request: a new column shows at once (its dataset's generation bumped).
	if got := h.mustStart("a", "FIELD"); !eq(got, []string{"a", "a.x"}) {
		t.Fatalf("fields before: %v", got)
	}
	fx.Field(a, "y", fx.T0, time.Time{})
	if err := cache.NewGenerations(rdb).Bump(context.Background(), []string{a}); err != nil {
		t.Fatal(err)
	}
	cd.Reads()
	if got := h.mustStart("a", "FIELD"); !eq(got, []string{"a", "a.x", "a.y"}) {
		t.Fatalf("a new column within the start TTL: %v, want it at once", got)
	}
	if cd.Reads() == 0 {
		t.Fatal("the field list must have been read from Neo4j")
	}
}
