package history

import (
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

func TestEstimateScalesPhasesSeparately(t *testing.T) {
	c := gen.DefaultConfig(1, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.Datasets, c.RunsPerDay, c.HubConsumers = 1000, 100, 10
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{World: w, RunDays: 2}
	res := Result{Phases: []PhaseResult{{Name: "datasets", Rows: 3000, RowsPerSec: 1000}, {Name: "runs", Rows: 1200, RowsPerSec: 600}}}
	e := EstimateAt(res, cfg, 10000, 2000) // 10x datasets, 10x runs
	if e.Rows != 42000 || e.Duration != 50*time.Second || e.Partial {
		t.Fatalf("got %+v, want 42000 rows in 50s", e)
	}
	cfg.RunDays = 0
	if e := EstimateAt(res, cfg, 10000, 2000); !e.Partial {
		t.Fatal("an estimate without run detail must say it is partial")
	}
}
