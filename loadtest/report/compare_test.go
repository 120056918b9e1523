package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/compare"
	"github.com/headwater-data/headwater/loadtest/drive"
)

func compareSample() Result {
	c := &compare.Result{Config: compare.Config{MaxDepth: 2, Reps: 1, NaiveTimeout: time.Second, MaxNodes: 5000,
		AsOf: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}, OrdinaryRoots: 2, HubRoots: 1, Cases: 8, Checked: 6,
		Mismatched: 1, Unchecked: 2, NaiveTimeouts: 1, NaiveSkipped: 1, CacheMode: "off (no cache requests during the run)",
		Mismatches: []compare.MismatchCase{{Case: compare.Case{Root: compare.Root{Namespace: "ns", Name: "hub"}, Down: true, Depth: 2},
			Mismatch: compare.Mismatch{NodesOnlyNaive: 3, Examples: []string{"node only in naive: ds_x"}}}}}
	for _, class := range []string{"ordinary", "hub"} {
		for d := 1; d <= 2; d++ {
			r := compare.Row{Class: class, Direction: "BOTH", Depth: d, Headwater: drive.Percentiles{Count: 2, P50: 10, P95: 20, P99: 20},
				Naive: drive.Percentiles{Count: 2, P50: 30, P95: 40, P99: 40}, Ratio: compare.Ratios{P50: 3, P95: 2, P99: 2}}
			if class == "hub" && d == 2 {
				r.NaiveTimeouts, r.Naive, r.Ratio = 1, drive.Percentiles{Count: 2, P50: 1000, P95: 1000, P99: 1000}, compare.Ratios{P50: 100, P95: 50, P99: 50}
			}
			c.Rows = append(c.Rows, r)
		}
	}
	return Result{Kind: KindCompare, Shape: Shape{Prefix: "p", Datasets: 30000}, Compare: c}
}

func TestMarkdownStatesComparisonVerdictAndLowerBounds(t *testing.T) {
	md := Markdown(compareSample())
	for _, want := range []string{"ANSWERS DIFFER", "**1 mismatched**", "naive timeouts 1", "| hub | BOTH | 2 |", "≥1000", "≥100.0",
		"| ordinary | BOTH | 1 |", "| 3.0 |", "node only in naive: ds_x", "Headwater cache: off"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestCompareChartIsAPNG(t *testing.T) {
	paths, err := Charts(compareSample(), t.TempDir(), "c")
	if err != nil || len(paths) != 1 || !strings.HasSuffix(paths[0], "c-compare-latency-by-depth.png") {
		t.Fatalf("charts %v: %v", paths, err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 5000 {
		t.Errorf("not a drawn PNG (%d bytes, %v)", len(b), err)
	}
}
