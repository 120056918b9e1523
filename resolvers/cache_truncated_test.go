package resolvers

import (
	"testing"

	"github.com/headwater-data/headwater/cache"
)

// TestTruncatedFirstPageIsCachedWithCallersCursor: a first page cut by the node budget is served from the results
// tier on the next identical request, with a cursor bound to that request's caller: the continuation works for
// each caller, and one caller's cursor is refused to another (the cached entry never holds a signed cursor).
func TestTruncatedFirstPageIsCachedWithCallersCursor(t *testing.T) {
	h := newHarness(t, withRedis(realRedis(t)))
	tree(h.fx)
	start := dsStart(h.fx.NS, "a")
	vars := func() map[string]any {
		return map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 5, "max": 3}
	}
	first := h.lineage(vars())
	if !first.Truncated || first.Cursor == nil {
		t.Fatalf("maxNodes 3 should truncate: %+v", first)
	}
	hits := h.counter("headwater_cache_hits_total", cache.TierResults)
	var bob lineageData
	if errs := h.query("bob", lineageQuery, vars(), &bob); len(errs) > 0 {
		t.Fatalf("bob: %v", errs)
	}
	if h.counter("headwater_cache_hits_total", cache.TierResults) <= hits {
		t.Fatal("the identical truncated first page must be a results-tier hit")
	}
	if !eq(bob.Lineage.names(), first.names()) || !bob.Lineage.Truncated || bob.Lineage.Cursor == nil {
		t.Fatalf("cached page %v truncated=%v, want %v with a cursor", bob.Lineage.names(), bob.Lineage.Truncated, first.names())
	}
	if *bob.Lineage.Cursor == *first.Cursor {
		t.Fatal("two principals got the same cursor: the cached page must be bound to each caller")
	}
	// Each caller's cursor continues to the full answer; alice's cursor is refused to bob.
	pages := append([]lineageGraph{first},
		h.paged(map[string]any{"start": start, "dir": "DOWNSTREAM", "depth": 5, "max": 3, "after": *first.Cursor})...)
	assertPagesComplete(t, h, pages, start, "DOWNSTREAM", 5)
	next := vars()
	next["after"] = *bob.Lineage.Cursor
	var cont lineageData
	if errs := h.query("bob", lineageQuery, next, &cont); len(errs) > 0 || len(cont.Lineage.Nodes) == 0 {
		t.Fatalf("bob's cursor from the cached page: %v %+v", errs, cont.Lineage)
	}
	next["after"] = *first.Cursor
	if errs := h.query("bob", lineageQuery, next, &cont); len(errs) == 0 || errs[0].code() != "BAD_REQUEST" {
		t.Fatalf("alice's cursor used by bob: errors %v, want BAD_REQUEST", errs)
	}
}
