package main

import (
	"testing"
	"time"
)

func TestWorldFlagsMapToConfig(t *testing.T) {
	f := WorldFlags{Seed: 9, Prefix: "p", Datasets: 100, RunsPerDay: 1000, HubConsumers: 5, ColumnShare: 0.5,
		StagingShare: 0.1, FailShare: 0.1, Start: "2026-01-02T03:04:05Z"}
	c, err := f.config(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Seed != 9 || c.Prefix != "p" || c.Datasets != 100 || c.ColumnShare != 0.5 || c.FailShare != 0.1 ||
		!c.Start.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("flags not mapped: %+v", c)
	}
	f.Start = "yesterday"
	if _, err := f.config(time.Now()); err == nil {
		t.Fatal("a bad --start must be an error")
	}
}

func TestStartForEndsEventsNearNow(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	c, err := WorldFlags{Prefix: "p", Datasets: 100, RunsPerDay: 200000, HubConsumers: 5}.config(now)
	if err != nil {
		t.Fatal(err)
	}
	// 500,000 events at 200,000 runs x 2.5 events a day span one simulated day, plus an hour of margin.
	if got := startFor(c, 500000, now); !got.Equal(now.Add(-25 * time.Hour)) {
		t.Fatalf("start %s, want %s", got, now.Add(-25*time.Hour))
	}
}
