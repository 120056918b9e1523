package resolvers

import (
	"testing"
	"time"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/registry"
)

// The items behind a figure are paged with endCursor; a bad cursor, page size or window is BAD_REQUEST naming it.
func TestCoverageItemsPageAndArgumentsAreChecked(t *testing.T) {
	h := newHarness(t)
	h.fx.Job("j1")
	inv := inventory.Inventory{Source: "cov-" + testenv.Token(6), Kind: inventory.KindList}
	for _, n := range []string{"j1", "j2", "j3", "j4"} {
		inv.Jobs = append(inv.Jobs, inventory.Job{Namespace: h.fx.NS, Name: n, Schedule: "@daily", Interval: 24 * time.Hour})
	}
	if err := inv.Normalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.NewStore(h.fx.Store).Register(t.Context(), inv, "test", h.fx.Now); err != nil {
		t.Fatal(err)
	}
	const q = `query($ns: String, $after: String) { coverage(namespace: $ns) { jobsReporting { numerator denominator label
  items(first: 2, after: $after) { totalCount endCursor hasNextPage nodes { name status } } } } }`
	type page struct {
		Coverage struct {
			JobsReporting struct {
				Numerator, Denominator int
				Label                  string
				Items                  struct {
					TotalCount  int
					EndCursor   *string
					HasNextPage bool
					Nodes       []struct{ Name, Status string }
				}
			}
		}
	}
	var names []string
	var after any
	for range 3 {
		var p page
		h.mustQuery(q, map[string]any{"ns": h.fx.NS, "after": after}, &p)
		f := p.Coverage.JobsReporting
		if f.Numerator != 1 || f.Denominator != 4 || f.Label != "1 of 4 expected jobs reporting" || f.Items.TotalCount != 3 {
			t.Fatalf("figure: %+v", f)
		}
		for _, n := range f.Items.Nodes {
			names = append(names, n.Name+":"+n.Status)
		}
		if !f.Items.HasNextPage {
			break
		}
		after = *f.Items.EndCursor
	}
	if want := []string{"j2:NEVER_REPORTED", "j3:NEVER_REPORTED", "j4:NEVER_REPORTED"}; len(names) != 3 || names[0] != want[0] || names[2] != want[2] {
		t.Fatalf("pages: %v, want %v", names, want)
	}
	for name, c := range map[string]struct {
		q    string
		vars map[string]any
	}{
		"cursor":   {q, map[string]any{"ns": h.fx.NS, "after": "bm9wZQ"}},
		"first":    {`{ coverage { jobsReporting { items(first: 501) { totalCount } } } }`, nil},
		"window":   {`{ coverage(window: "often") { window } }`, nil},
		"too long": {`{ coverage(window: "400d") { window } }`, nil},
	} {
		errs := h.query("", c.q, c.vars, nil)
		if len(errs) == 0 || errs[0].code() != guard.CodeBadRequest {
			t.Errorf("%s: %+v, want BAD_REQUEST", name, errs)
		}
	}
}
