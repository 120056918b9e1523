package lineage

import (
	"testing"

	"github.com/headwater-data/headwater/api"
)

// TestResultTierStoresOnTypedReasons: whether the results tier stores a page is decided on the typed stop
// reasons (a page the deadline stopped is not stored: a later request may answer more), never on the gap's words.
func TestResultTierStoresOnTypedReasons(t *testing.T) {
	gens := map[string]int64{"ds_a": 1, "epoch": 0}
	for _, c := range []struct {
		name  string
		pg    page
		store bool
	}{
		{"complete", page{gens: gens}, true},
		{"fan-out", page{stops: []api.StopReason{api.StopFanOut}, gens: gens}, true},
		{"node budget and depth cap", page{stops: []api.StopReason{api.StopNodeBudget, api.StopDepthCap}, gens: gens}, true},
		{"deadline", page{stops: []api.StopReason{api.StopFanOut, api.StopDeadline}, gens: gens}, false},
		{"no generations", page{}, false},
		{"no epoch", page{gens: map[string]int64{"ds_a": 1}}, false},
	} {
		if got := storable(c.pg); got != c.store {
			t.Errorf("%s: storable = %v, want %v", c.name, got, c.store)
		}
	}
}
