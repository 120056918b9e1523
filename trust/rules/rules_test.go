package rules

import (
	"testing"
	"time"
)

func TestStatusOf(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	day, grace := 24*time.Hour, time.Hour
	cases := []struct {
		name     string
		interval time.Duration
		paused   bool
		matched  bool
		last     time.Time
		want     Status
	}{
		{"within the schedule", day, false, true, now.Add(-2 * time.Hour), StatusReporting},
		{"within the grace", day, false, true, now.Add(-day - 59*time.Minute), StatusReporting},
		{"past the grace", day, false, true, now.Add(-day - 61*time.Minute), StatusLate},
		{"matched, no event time", day, false, true, time.Time{}, StatusLate},
		{"nothing matches", day, false, false, time.Time{}, StatusNeverReported},
		{"no schedule known", 0, false, true, now.Add(-100 * day), StatusNoSchedule},
		{"no schedule, nothing matches", 0, false, false, time.Time{}, StatusNeverReported},
		{"paused", day, true, false, time.Time{}, StatusPaused},
	}
	for _, c := range cases {
		if got := StatusOf(c.interval, c.paused, c.matched, c.last, now, grace); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if Scheduled(0, false) || Scheduled(day, true) || !Scheduled(day, false) {
		t.Error("Scheduled: only known, unpaused schedules count")
	}
}

func TestQuietThreshold(t *testing.T) {
	cases := []struct {
		minutes []int64
		p95     time.Duration
	}{
		{nil, 0},
		{[]int64{5}, 0},
		{[]int64{5, 5, 5}, 0},
		{[]int64{0, 10}, 10 * time.Minute},
		// 20 gaps of 1 minute and one of 60: the P95 (rank 20 of 21) is 1 minute.
		{append(seq(0, 21), 80), time.Minute},
		// 10 gaps: rank 10 is the largest.
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 70}, 61 * time.Minute},
	}
	for _, c := range cases {
		if got := P95Gap(c.minutes); got != c.p95 {
			t.Errorf("P95Gap(%v) = %v, want %v", c.minutes, got, c.p95)
		}
	}
	if got := QuietThreshold(10*time.Minute, 3, time.Hour); got != time.Hour {
		t.Errorf("at least the minimum: %v", got)
	}
	if got := QuietThreshold(40*time.Minute, 3, time.Hour); got != 2*time.Hour {
		t.Errorf("factor times P95: %v", got)
	}
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func TestStaleThreshold(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := StaleThreshold(t0, t0.Add(10*time.Hour), 11, 3, 24*time.Hour); got != 24*time.Hour {
		t.Errorf("hourly job: at least a day, got %v", got)
	}
	if got := StaleThreshold(t0, t0.Add(20*24*time.Hour), 11, 3, 24*time.Hour); got != 6*24*time.Hour {
		t.Errorf("every two days: 6 days, got %v", got)
	}
	if got := StaleThreshold(t0, t0, 1, 3, 24*time.Hour); got != 24*time.Hour {
		t.Errorf("one run: the minimum, got %v", got)
	}
}
