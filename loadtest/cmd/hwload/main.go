// Command hwload is Headwater's load-test instrument: it generates OpenLineage traffic (gen), bulk-loads a
// design-size history into Neo4j (history), drives ingestion (ingest) and queries (query), compares the
// query path with the naive Cypher alternative (compare), and renders results
// as markdown and charts (report). docs/loadtest.md documents every flag.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/alecthomas/kong"
)

// CLI is the command line.
type CLI struct {
	Gen       GenCmd       `cmd:"" help:"Generate OpenLineage events to a file, the HTTP gateway or Kafka."`
	History   HistoryCmd   `cmd:"" help:"Bulk-load a year of compacted lineage and a window of run detail into Neo4j."`
	Ingest    IngestCmd    `cmd:"" help:"Drive the gateway and measure accepted, projected and send-to-visible latency."`
	Query     QueryCmd     `cmd:"" help:"Drive lineage GraphQL queries and measure latency, throughput and truncation."`
	Compare   CompareCmd   `cmd:"" help:"Compare lineage answers and latency with the naive variable-length Cypher query on the same roots."`
	Report    ReportCmd    `cmd:"" help:"Render markdown and PNG charts from a result JSON file."`
	Envs      EnvsCmd      `cmd:"" help:"Print the service's --identity-environments value for prefixes (dataset keys include the environment)."`
	TxLog     TxLogCmd     `cmd:"" name:"txlog" help:"Print the write position of Neo4j's transaction log (log bytes a step wrote: the difference of two)."`
	Inventory InventoryCmd `cmd:"" help:"Write an expected-job inventory for a world (a JSON list for headwater inventory register --kind list)."`
	Dbt       DbtCmd       `cmd:"" help:"Benchmark a generated dbt manifest's import, re-import, pre-release impact and superseding import (time, tx-log bytes)."`
}

// env is what every command gets: a logger and the clock.
type env struct {
	log *slog.Logger
	now func() time.Time
	ctx context.Context
}

func main() {
	var cli CLI
	k := kong.Parse(&cli, kong.Name("hwload"), kong.Description("Headwater load-test instrument."),
		kong.UsageOnError())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := &env{log: slog.New(slog.NewTextHandler(os.Stderr, nil)), now: time.Now, ctx: ctx}
	k.FatalIfErrorf(k.Run(e))
}
