package history

import "time"

// Estimate projects a measured load to another size, phase by phase: static phases scale with the number of
// datasets, the runs phase with the number of runs (days x runs per day). It assumes the measured rows/s hold,
// which is optimistic when the graph outgrows the page cache; say so wherever it is shown.
type Estimate struct {
	Datasets   int           `json:"datasets"`
	Runs       int64         `json:"runs"`
	Rows       int64         `json:"rows"`
	Duration   time.Duration `json:"durationNs"`
	RowsPerSec float64       `json:"rowsPerSec"`
	Partial    bool          `json:"partial"` // no run detail was measured, so the runs phase is missing
}

// EstimateAt scales a result measured with cfg to datasets and runs.
func EstimateAt(res Result, cfg Config, datasets int, runs int64) Estimate {
	e := Estimate{Datasets: datasets, Runs: runs}
	measuredRuns := int64(cfg.RunDays) * int64(cfg.World.Config.RunsPerDay)
	e.Partial = measuredRuns == 0 && runs > 0
	dsScale := float64(datasets) / float64(max(1, len(cfg.World.Datasets)))
	runScale := float64(runs) / float64(max(1, measuredRuns))
	var secs float64
	for _, p := range res.Phases {
		scale := dsScale
		if p.Name == PhaseRuns || p.Name == PhaseHubReads {
			scale = runScale
		}
		rows := float64(p.Rows) * scale
		e.Rows += int64(rows)
		if p.RowsPerSec > 0 {
			secs += rows / p.RowsPerSec
		}
	}
	e.Duration = time.Duration(secs * float64(time.Second))
	if secs > 0 {
		e.RowsPerSec = float64(e.Rows) / secs
	}
	return e
}
