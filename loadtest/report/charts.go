package report

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/headwater-data/headwater/loadtest/drive"
)

const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 4.5 * vg.Inch
	barWidth    = 12 * vg.Length(1)
)

// series is one named line.
type series struct {
	name string
	xys  plotter.XYs
}

// Charts writes the PNGs for a result into dir, each name starting with stem, and returns their paths.
func Charts(r Result, dir, stem string) ([]string, error) {
	var out []string
	add := func(name string, p *plot.Plot, err error) error {
		if err != nil {
			return err
		}
		path := filepath.Join(dir, stem+"-"+name)
		if err := p.Save(chartWidth, chartHeight, path); err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		out = append(out, path)
		return nil
	}
	var errs []error
	if q := r.Query; q != nil {
		p, err := latencyByDepth(q)
		errs = append(errs, add("query-latency-by-depth.png", p, err))
		p, err = latencyByFanout(q)
		errs = append(errs, add("query-latency-by-fanout.png", p, err))
		p, err = lines("Query throughput over time", "queries/s", timelineSeries(q.Timeline, "answered", "errors"))
		errs = append(errs, add("query-throughput.png", p, err))
	}
	if in := r.Ingest; in != nil {
		p, err := lines("Ingest over time", "events/s", timelineSeries(in.Timeline, "accepted", "projected", "rejected"))
		errs = append(errs, add("ingest-throughput.png", p, err))
		if in.MaxLag >= 0 {
			p, err = lines("Projector consumer lag", "messages", timelineSeries(in.Timeline, "lag"))
			errs = append(errs, add("ingest-lag.png", p, err))
		}
	}
	if c := r.Compare; c != nil {
		p, err := compareByDepth(c)
		errs = append(errs, add("compare-latency-by-depth.png", p, err))
	}
	if h := r.History; h != nil {
		p, err := historyRates(r)
		errs = append(errs, add("history-load-rate.png", p, err))
	}
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func latencyByDepth(q *drive.QueryResult) (*plot.Plot, error) {
	p := newPlot("Lineage query latency by depth", "depth (dataset hops)", "ms")
	pick := []struct {
		name string
		f    func(drive.DepthRow) (float64, int)
	}{
		{"ordinary p50", func(d drive.DepthRow) (float64, int) { return d.Ordinary.P50, d.Ordinary.Count }},
		{"ordinary p95", func(d drive.DepthRow) (float64, int) { return d.Ordinary.P95, d.Ordinary.Count }},
		{"ordinary p99", func(d drive.DepthRow) (float64, int) { return d.Ordinary.P99, d.Ordinary.Count }},
		{"hub p95", func(d drive.DepthRow) (float64, int) { return d.Hub.P95, d.Hub.Count }},
		{"hub p99", func(d drive.DepthRow) (float64, int) { return d.Hub.P99, d.Hub.Count }},
	}
	var ss []series
	for _, s := range pick {
		var xys plotter.XYs
		for _, d := range q.ByDepth {
			if v, n := s.f(d); n > 0 {
				xys = append(xys, plotter.XY{X: float64(d.Depth), Y: v})
			}
		}
		ss = append(ss, series{s.name, xys})
	}
	return p, addLines(p, ss)
}

func latencyByFanout(q *drive.QueryResult) (*plot.Plot, error) {
	p := newPlot("Lineage query latency by answer size (fan-out)", "nodes returned", "ms")
	var names []string
	var p50, p95, p99 plotter.Values
	for _, f := range q.ByFanout {
		names = append(names, fmt.Sprintf("%s (n=%d)", f.Bucket, f.P.Count))
		p50, p95, p99 = append(p50, f.P.P50), append(p95, f.P.P95), append(p99, f.P.P99)
	}
	for i, v := range []plotter.Values{p50, p95, p99} {
		bars, err := plotter.NewBarChart(v, barWidth)
		if err != nil {
			return nil, fmt.Errorf("bars: %w", err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-1) * barWidth
		p.Add(bars)
		p.Legend.Add([]string{"p50", "p95", "p99"}[i], bars)
	}
	p.NominalX(names...)
	return p, nil
}

func timelineSeries(tl []drive.Second, names ...string) []series {
	get := map[string]func(drive.Second) (float64, bool){
		"answered":  func(s drive.Second) (float64, bool) { return float64(s.Completed - s.Errors), true },
		"errors":    func(s drive.Second) (float64, bool) { return float64(s.Errors), true },
		"accepted":  func(s drive.Second) (float64, bool) { return float64(s.Accepted), true },
		"projected": func(s drive.Second) (float64, bool) { return float64(s.Projected), true },
		"rejected":  func(s drive.Second) (float64, bool) { return float64(s.Rejected), true },
		"lag":       func(s drive.Second) (float64, bool) { return float64(s.Lag), s.Lag >= 0 },
	}
	var out []series
	for _, n := range names {
		var xys plotter.XYs
		for _, s := range tl {
			if v, ok := get[n](s); ok {
				xys = append(xys, plotter.XY{X: float64(s.T), Y: v})
			}
		}
		out = append(out, series{n, xys})
	}
	return out
}

func lines(title, y string, ss []series) (*plot.Plot, error) {
	p := newPlot(title, "seconds since start", y)
	return p, addLines(p, ss)
}

func addLines(p *plot.Plot, ss []series) error {
	for i, s := range ss {
		if len(s.xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return fmt.Errorf("line %s: %w", s.name, err)
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		if len(s.xys) > 60 {
			pts.Radius = 0
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	return nil
}

func historyRates(r Result) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("History load rate (%d datasets, %d runs in Neo4j)", r.Shape.Datasets, runsOf(r)), "phase", "rows/s")
	var v plotter.Values
	var names []string
	for _, ph := range r.History.Phases {
		v = append(v, ph.RowsPerSec)
		names = append(names, ph.Name)
	}
	bars, err := plotter.NewBarChart(v, 3*barWidth)
	if err != nil {
		return nil, fmt.Errorf("bars: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	p.NominalX(names...)
	return p, nil
}

func runsOf(r Result) int64 {
	if r.Shape.Counts == nil {
		return 0
	}
	return r.Shape.Counts.Runs
}
