package kafkaio

import "testing"

// A message with a lane is partitioned by the lane whatever its key; without one, by its key as before.
func TestLanePartitionsByProducerNotKey(t *testing.T) {
	lane := ProducerLane("producer-a")
	want := PartitionOf(lane, "", 6) // the lane hashed like a key
	for _, key := range []string{"run:ns/a", "run:ns/b", "job:ns/c", "dataset:s3://x/y", ""} {
		if got := PartitionOf(key, lane, 6); got != want {
			t.Errorf("key %q with lane: partition %d, want %d", key, got, want)
		}
	}
	seen := map[int32]bool{}
	for _, key := range []string{"run:ns/a", "run:ns/b", "run:ns/c", "run:ns/d", "run:ns/e", "run:ns/f", "run:ns/g"} {
		seen[PartitionOf(key, "", 6)] = true
	}
	if len(seen) < 2 {
		t.Error("without a lane, keys should still spread over partitions")
	}
}
