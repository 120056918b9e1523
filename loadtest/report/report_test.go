package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/machine"
)

func sample() Result {
	q := &drive.QueryResult{Throughput: 12.5, Elapsed: time.Minute, Overall: drive.Percentiles{Count: 10, P50: 5, P95: 9, P99: 12},
		Errors: map[string]int{"NOT_FOUND": 2}, ByGranularity: map[string]drive.Percentiles{"DATASET": {Count: 10, P50: 5}}}
	for d := 1; d <= 5; d++ {
		q.ByDepth = append(q.ByDepth, drive.DepthRow{Depth: d, Ordinary: drive.Percentiles{Count: 3, P50: float64(d), P95: float64(2 * d), P99: float64(3 * d)},
			Hub: drive.Percentiles{Count: 1, P50: float64(5 * d), P95: float64(6 * d), P99: float64(7 * d)}})
	}
	q.ByFanout = []drive.FanoutRow{{Bucket: "0-1", P: drive.Percentiles{Count: 1, P50: 1, P95: 2, P99: 3}}, {Bucket: "2-10", P: drive.Percentiles{Count: 2, P50: 3, P95: 4, P99: 5}}}
	for i := range 10 {
		q.Timeline = append(q.Timeline, drive.Second{T: i, Completed: 10 + i, Errors: i % 2, Lag: -1})
	}
	h := &history.Result{Rows: 1000, RowsPerSec: 500, Phases: []history.PhaseResult{{Name: "datasets", Rows: 10, RowsPerSec: 100}, {Name: "runs", Rows: 990, RowsPerSec: 600}}}
	return Result{Kind: KindQuery, Machine: machine.Describe(), Shape: Shape{Prefix: "p", Datasets: 2000, Counts: &history.Counts{Datasets: 2000, Runs: 40000}},
		Query: q, History: h, Estimate: &history.Estimate{Datasets: 30000, Runs: 6000000, Rows: 1, Duration: time.Hour}}
}

func TestMarkdownStatesShapeMachineAndLatency(t *testing.T) {
	md := Markdown(sample())
	for _, want := range []string{"cores", "2000 datasets", "| 2000 |", "12.5 queries/s", "| 5 | 3 |", "NOT_FOUND 2", "rows/s", "Estimate at 30000 datasets"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestChartsArePNGs(t *testing.T) {
	dir := t.TempDir()
	paths, err := Charts(sample(), dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 {
		t.Fatalf("want 4 charts (depth, fan-out, throughput, history), got %v", paths)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 5000 {
			t.Errorf("%s: not a drawn PNG (%d bytes, %v)", p, len(b), err)
		}
		if !strings.HasPrefix(filepath.Base(p), "x-") {
			t.Errorf("%s: chart names start with the stem", p)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := Write(path, sample()); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Query.Throughput != 12.5 || got.Shape.Counts.Runs != 40000 || got.Machine.Cores == 0 {
		t.Fatalf("round trip lost data: %+v", got)
	}
}
