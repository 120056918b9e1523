package report

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/headwater-data/headwater/loadtest/compare"
	"github.com/headwater-data/headwater/loadtest/drive"
)

// writeCompare renders the naive-alternative comparison: the verdict on the answers, then latency per root
// class, direction and depth with the naive/Headwater ratio.
func writeCompare(b *strings.Builder, c *compare.Result) {
	cfg := c.Config
	fmt.Fprintf(b, "## Headwater vs the naive variable-length Cypher query\n\n")
	fmt.Fprintf(b, "%d ordinary and %d hub roots, depths 1..%d, UPSTREAM and DOWNSTREAM, DATASET granularity, %d repetitions, "+
		"asOf %s for both, one query at a time, %s. Naive timeout %s; Headwater maxNodes %d per page, cursors followed. "+
		"Headwater cache: %s.\n\n", c.OrdinaryRoots, c.HubRoots, cfg.MaxDepth, cfg.Reps,
		cfg.AsOf.UTC().Format("2006-01-02T15:04:05.000Z"), c.Elapsed.Round(1e6), cfg.NaiveTimeout, cfg.MaxNodes, c.CacheMode)
	verdict := "**same answers**"
	if c.Mismatched > 0 {
		verdict = "**ANSWERS DIFFER**"
	}
	fmt.Fprintf(b, "Answers: %s — %d cases, %d checked, **%d mismatched**, %d unchecked (naive timeouts %d of which %d hit "+
		"Neo4j's memory limit, skipped after a shallower timeout %d, naive errors %d, Headwater errors %d).\n\n", verdict,
		c.Cases, c.Checked, c.Mismatched, c.Unchecked, c.NaiveTimeouts, c.NaiveOutOfMemory, c.NaiveSkipped, c.NaiveErrors,
		c.HeadwaterErrors)
	b.WriteString("Latency in ms. Naive percentiles count timed-out and skipped queries at the timeout, so a value marked ≥ " +
		"is a lower bound. Ratio = naive / Headwater.\n\n")
	b.WriteString("| class | direction | depth | nodes (mean/max) | pages | headwater p50 | p95 | p99 | naive p50 | p95 | p99 | timeouts | ratio p50 | p95 | p99 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		lb := func(v float64) string { return atLeast(v, r, cfg) }
		fmt.Fprintf(b, "| %s | %s | %d | %.0f/%d | %d | %.1f | %.1f | %.1f | %s | %s | %s | %d+%d | %s | %s | %s |\n",
			r.Class, r.Direction, r.Depth, r.MeanNodes, r.MaxNodes, r.MaxPages, r.Headwater.P50, r.Headwater.P95,
			r.Headwater.P99, lb(r.Naive.P50), lb(r.Naive.P95), lb(r.Naive.P99), r.NaiveTimeouts, r.NaiveSkipped,
			ratioStr(r.Ratio.P50, r.Naive.P50, r, cfg), ratioStr(r.Ratio.P95, r.Naive.P95, r, cfg),
			ratioStr(r.Ratio.P99, r.Naive.P99, r, cfg))
	}
	if len(c.Mismatches) > 0 {
		b.WriteString("\nMismatches (first ones):\n\n")
		for _, m := range c.Mismatches {
			fmt.Fprintf(b, "- %s %s/%s depth %d: %s\n", dirOf(m.Case.Down), m.Case.Root.Namespace, m.Case.Root.Name,
				m.Case.Depth, m.Mismatch.String())
		}
	}
	if len(c.ErrorExamples) > 0 {
		b.WriteString("\nErrors (first ones):\n\n")
		for _, e := range c.ErrorExamples {
			fmt.Fprintf(b, "- %s\n", e)
		}
	}
}

func dirOf(down bool) string {
	if down {
		return "DOWNSTREAM"
	}
	return "UPSTREAM"
}

// censored reports whether a naive percentile may be the timeout standing for a query that did not finish.
func censored(v float64, r compare.Row, cfg compare.Config) bool {
	return r.NaiveTimeouts+r.NaiveSkipped > 0 && v >= float64(cfg.NaiveTimeout.Milliseconds())
}

func atLeast(v float64, r compare.Row, cfg compare.Config) string {
	if censored(v, r, cfg) {
		return fmt.Sprintf("≥%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func ratioStr(ratio, naive float64, r compare.Row, cfg compare.Config) string {
	if censored(naive, r, cfg) {
		return fmt.Sprintf("≥%.1f", ratio)
	}
	return fmt.Sprintf("%.1f", ratio)
}

// compareByDepth plots p50 and p95 by depth of both methods per root class (both directions pooled), log scale:
// one colour per (class, percentile), solid for Headwater, dashed for the naive query.
func compareByDepth(c *compare.Result) (*plot.Plot, error) {
	p := newPlot("Headwater (solid) vs naive Cypher (dashed): latency by depth, both directions", "depth (dataset hops)", "ms (log)")
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	methods := []struct {
		name string
		f    func(compare.Row) drive.Percentiles
		dash []vg.Length
	}{{"headwater", func(r compare.Row) drive.Percentiles { return r.Headwater }, nil},
		{"naive", func(r compare.Row) drive.Percentiles { return r.Naive }, []vg.Length{vg.Points(5), vg.Points(3)}}}
	colour := 0
	for _, class := range []string{"ordinary", "hub"} {
		for _, pc := range []string{"p50", "p95"} {
			for _, m := range methods {
				xys := depthSeries(c, class, pc, m.f)
				if len(xys) == 0 {
					continue
				}
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, fmt.Errorf("line %s: %w", m.name, err)
				}
				l.Color, pts.Color, l.Dashes = plotutil.Color(colour), plotutil.Color(colour), m.dash
				pts.Shape = plotutil.Shape(colour)
				p.Add(l, pts)
				p.Legend.Add(fmt.Sprintf("%s %s %s", m.name, class, pc), l, pts)
			}
			colour++
		}
	}
	p.Y.Max *= legendHeadroom
	return p, nil
}

func depthSeries(c *compare.Result, class, pc string, f func(compare.Row) drive.Percentiles) plotter.XYs {
	var xys plotter.XYs
	for _, r := range c.Rows {
		if r.Class != class || r.Direction != "BOTH" {
			continue
		}
		pr := f(r)
		v := pr.P50
		if pc == "p95" {
			v = pr.P95
		}
		if pr.Count > 0 {
			xys = append(xys, plotter.XY{X: float64(r.Depth), Y: max(v, minLogMs)})
		}
	}
	return xys
}

// legendHeadroom stretches the log axis upwards so the legend does not cover the lines.
const legendHeadroom = 30

// minLogMs keeps a zero latency plottable on the log axis.
const minLogMs = 0.1
