package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/headwater-data/headwater/internal/ordered"
	"github.com/headwater-data/headwater/loadtest/drive"
)

// Markdown renders the result as tables a person can read.
func Markdown(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# hwload %s result (%s)\n\n", r.Kind, r.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d cores, %s, %.1f GiB RAM, %s/%s, %s.\n\n", m.Cores, orNA(m.CPUModel),
		float64(m.MemTotalBytes)/(1<<30), m.OS, m.Arch, m.GoVersion)
	writeShape(&b, r.Shape)
	if r.History != nil {
		writeHistory(&b, r)
	}
	if r.Ingest != nil {
		writeIngest(&b, r.Ingest)
	}
	if r.Query != nil {
		writeQuery(&b, r.Query)
	}
	if r.Compare != nil {
		writeCompare(&b, r.Compare)
	}
	if g := r.Generated; g != nil {
		fmt.Fprintf(&b, "\n## Generated traffic\n\n| events | runs | events/run | mean bytes | max bytes | column-lineage share | late | duplicates | renames |\n|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(&b, "| %d | %d | %.2f | %.0f | %d | %.3f | %d | %d | %d |\n", g.Events, g.Runs, g.EventsPerRun(),
			g.MeanBytes(), g.MaxBytes, g.ColumnLineageShare(), g.Late, g.Duplicates, g.Renames)
	}
	return b.String()
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func writeShape(b *strings.Builder, s Shape) {
	fmt.Fprintf(b, "Data shape: prefix `%s`, seed %d, %d datasets, %d jobs, %d hubs (each >= %d consumers), column-lineage share %.2f, %d runs/day.\n\n",
		s.Prefix, s.Seed, s.Datasets, s.Jobs, s.Hubs, s.MinHubConsumers, s.ColumnShare, s.RunsPerDay)
	if c := s.Counts; c != nil {
		fmt.Fprintf(b, "Read back from Neo4j:\n\n| datasets | names | fields | jobs | runs | INPUT_TO | OUTPUT_TO | READ | WROTE | COLUMN_FEEDS | INDIRECT_FEEDS | events | largest hub |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		fmt.Fprintf(b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n", c.Datasets, c.DatasetNames,
			c.Fields, c.Jobs, c.Runs, c.InputTo, c.OutputTo, c.Reads, c.Wrote, c.ColumnFeeds, c.IndirectFeeds, c.Events, c.MaxConsumers)
	}
}

func writeHistory(b *strings.Builder, r Result) {
	h := r.History
	fmt.Fprintf(b, "## History load\n\n%d rows (nodes + relationships) in %s: **%.0f rows/s**.\n\n| phase | rows | batches | seconds | rows/s |\n|---|---|---|---|---|\n",
		h.Rows, h.Elapsed.Round(1e6), h.RowsPerSec)
	for _, p := range h.Phases {
		fmt.Fprintf(b, "| %s | %d | %d | %.1f | %.0f |\n", p.Name, p.Rows, p.Batches, p.Elapsed.Seconds(), p.RowsPerSec)
	}
	if e := r.Estimate; e != nil {
		fmt.Fprintf(b, "\nEstimate at %d datasets and %d runs: %d rows in about %s at the measured per-phase rates "+
			"(optimistic once the graph outgrows the page cache).\n", e.Datasets, e.Runs, e.Rows, e.Duration.Round(time.Second))
		if e.Partial {
			b.WriteString("No run detail was loaded, so the estimate leaves out the runs phase (the largest).\n")
		}
	}
}

func writeIngest(b *strings.Builder, in *drive.IngestResult) {
	fmt.Fprintf(b, "## Ingest (%s", in.Mode)
	if in.Config.Rate > 0 {
		fmt.Fprintf(b, ", target %.0f events/s", in.Config.Rate)
	}
	fmt.Fprintf(b, ", batch %d, concurrency %d, %s)\n\n", in.Config.Batch, in.Config.Concurrency, in.Elapsed.Round(1e6))
	fmt.Fprintf(b, "| sent | accepted | rejected | throttled attempts | accepted/s | projected/s | visible | not visible | max lag |\n|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %d | %d | %d | %d | %.1f | %.1f | %d | %d | %d |\n\n", in.Sent, in.Accepted, in.Rejected, in.Throttled,
		in.AcceptedPerSec, in.ProjectedPerSec, in.Visible, in.NotVisible, in.MaxLag)
	if sh := in.Config.VisibleShare; sh > 0 && sh < 1 {
		fmt.Fprintf(b, "Send-to-visible is measured on a fixed %.0f %% sample of the accepted events (by eventId hash); "+
			"visible and not visible count that sample, projected/s scales it up.\n\n", sh*100)
	}
	fmt.Fprintf(b, "| latency | n | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n")
	row(b, "send (gateway answer)", in.SendLatency)
	row(b, "send-to-visible", in.VisibleLatency)
	writeCounts(b, "Rejections", in.RejectReasons)
}

func row(b *strings.Builder, name string, p drive.Percentiles) {
	fmt.Fprintf(b, "| %s | %d | %.1f | %.1f | %.1f | %.1f |\n", name, p.Count, p.P50, p.P95, p.P99, p.Max)
}

func writeQuery(b *strings.Builder, q *drive.QueryResult) {
	mode := "closed loop"
	if q.Config.Rate > 0 {
		mode = fmt.Sprintf("open loop at %.0f/s", q.Config.Rate)
	}
	fmt.Fprintf(b, "## Queries (%s, concurrency %d, %d principals, %s)\n\n", mode, q.Config.Concurrency, q.Config.Principals, q.Elapsed.Round(1e6))
	fmt.Fprintf(b, "Throughput **%.1f queries/s**, error rate %.3f, truncation rate %.3f", q.Throughput, q.ErrorRate, q.TruncationRate)
	if q.CacheHitRatio != nil {
		fmt.Fprintf(b, ", cache hit ratio %.3f", *q.CacheHitRatio)
	} else {
		b.WriteString(", cache hit ratio n/a (no headwater_cache_* counters)")
	}
	b.WriteString(".\n\n| class | n | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n")
	row(b, "all", q.Overall)
	row(b, "ordinary roots", q.Ordinary)
	row(b, "hub roots", q.Hub)
	row(b, "cached (hot set)", q.Cached)
	row(b, "uncached", q.Uncached)
	for _, g := range ordered.Keys(q.ByGranularity) {
		row(b, "granularity "+g, q.ByGranularity[g])
	}
	b.WriteString("\n| depth | ordinary n | ordinary p50 | ordinary p95 | ordinary p99 | hub n | hub p50 | hub p95 | hub p99 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range q.ByDepth {
		fmt.Fprintf(b, "| %d | %d | %.1f | %.1f | %.1f | %d | %.1f | %.1f | %.1f |\n", d.Depth, d.Ordinary.Count,
			d.Ordinary.P50, d.Ordinary.P95, d.Ordinary.P99, d.Hub.Count, d.Hub.P50, d.Hub.P95, d.Hub.P99)
	}
	b.WriteString("\n| nodes returned | n | p50 ms | p95 ms | p99 ms |\n|---|---|---|---|---|\n")
	for _, f := range q.ByFanout {
		fmt.Fprintf(b, "| %s | %d | %.1f | %.1f | %.1f |\n", f.Bucket, f.P.Count, f.P.P50, f.P.P95, f.P.P99)
	}
	writeCounts(b, "Errors", q.Errors)
}

func writeCounts(b *strings.Builder, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s: ", title)
	for i, k := range ordered.Keys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %d", k, m[k])
	}
	b.WriteString("\n")
}
