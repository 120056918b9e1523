package cache

import (
	"strings"
	"testing"
)

func TestKeyIsCanonicalAndTyped(t *testing.T) {
	base := Key{Tier: TierResults, Op: "lineage", Node: "ds_1", Direction: "BOTH", Depth: 3, AsOf: "now@0",
		Evidence: []string{"OBSERVED", "DECLARED"}, Scope: "allow-all"}
	same := base
	same.Evidence = []string{"DECLARED", "OBSERVED", "DECLARED"}
	if base.String() != same.String() {
		t.Fatal("evidence order must not change the key")
	}
	if !strings.HasPrefix(base.String(), "hw:c:res:") {
		t.Fatalf("key %s is not typed by tier", base.String())
	}
	for name, change := range map[string]func(*Key){
		"scope":     func(k *Key) { k.Scope = "other" },
		"asOf":      func(k *Key) { k.AsOf = "123" },
		"depth":     func(k *Key) { k.Depth = 4 },
		"attempted": func(k *Key) { k.IncludeAttempted = true },
		"page":      func(k *Key) { k.Page = "p" },
		"tier":      func(k *Key) { k.Tier = TierNeighbors },
	} {
		k := base
		change(&k)
		if k.String() == base.String() {
			t.Errorf("%s must change the key", name)
		}
	}
}

func TestValidNeedsEveryGenerationAndTheEpoch(t *testing.T) {
	cur := map[string]int64{EpochKey: 1, "a": 2, "b": 0}
	if !valid(map[string]int64{EpochKey: 1, "a": 2, "b": 0}, cur) {
		t.Fatal("matching generations must be valid")
	}
	if valid(map[string]int64{EpochKey: 1, "a": 1}, cur) || valid(map[string]int64{"a": 2}, cur) ||
		valid(map[string]int64{EpochKey: 0, "a": 2}, cur) {
		t.Fatal("a bumped node, a missing epoch or an old epoch must invalidate")
	}
}
