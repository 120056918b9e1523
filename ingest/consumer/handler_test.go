package consumer

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A batch waits BatchWait from its first message's Kafka timestamp: a message that waited while the previous
// batch was projected waits only the rest, an old one not at all, one from a clock ahead at most BatchWait.
func TestBatchWaitCountsFromTheMessageTimestamp(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := &handler{cfg: Config{BatchWait: 500 * time.Millisecond}, d: Deps{Now: func() time.Time { return now }}}
	for _, tc := range []struct {
		ts   time.Time
		want time.Duration
	}{
		{now, 500 * time.Millisecond},
		{now.Add(-300 * time.Millisecond), 200 * time.Millisecond},
		{now.Add(-time.Minute), 0},
		{now.Add(time.Minute), 500 * time.Millisecond},
		{time.Time{}, 500 * time.Millisecond},
	} {
		if got := h.batchWait(&sarama.ConsumerMessage{Timestamp: tc.ts}); got != tc.want {
			t.Errorf("timestamp %s: wait %s, want %s", tc.ts, got, tc.want)
		}
	}
}
