package lineage

import (
	"testing"
	"time"

	"github.com/headwater-data/headwater/lineage/walk"
)

// TestStartBucketSpreadsExpiry: a first page about "now" is keyed by a bucket shifted per start node, so hot
// roots do not all miss at the same instant; within one shifted bucket the key is stable; other pages keep tKey.
func TestStartBucketSpreadsExpiry(t *testing.T) {
	s := resultCache{cfg: Config{NowBucket: 5 * time.Minute}}
	start := func(k string) resolvedStart {
		return resolvedStart{nodes: []walk.Node{{Kind: walk.HopDataset, Key: k}}}
	}
	const t0 = int64(1_800_000_000_000)
	boundaries := map[int64]bool{}
	for _, k := range []string{"ds_a", "ds_b", "ds_c", "ds_d", "ds_e", "ds_f"} {
		key := s.startBucket("now@x", t0, start(k), nil)
		// Find when the key changes: it must stay put for less than a bucket and change exactly once per bucket.
		changes := 0
		for dt := int64(0); dt < 5*60_000; dt += 1000 {
			if next := s.startBucket("now@x", t0+dt, start(k), nil); next != key {
				changes++
				boundaries[dt] = true
				key = next
			}
		}
		if changes != 1 {
			t.Fatalf("%s: key changed %d times within one bucket, want 1", k, changes)
		}
	}
	if len(boundaries) < 4 {
		t.Fatalf("6 roots expire at only %d distinct instants: %v", len(boundaries), boundaries)
	}
	if got := s.startBucket("1700000000000", t0, start("ds_a"), nil); got != "1700000000000" {
		t.Fatalf("explicit asOf rekeyed: %s", got)
	}
	if got := s.startBucket("now@x", t0, start("ds_a"), &cursorState{}); got != "now@x" {
		t.Fatalf("cursor page rekeyed: %s", got)
	}
}
