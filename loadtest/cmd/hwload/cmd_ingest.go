package main

import (
	"strings"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/report"
	"github.com/headwater-data/headwater/loadtest/sink"
)

// closedLoopRateGuess is the rate (events/s) assumed when choosing the simulated start of a closed-loop run. It
// must not be below what a run reaches: a faster run outruns "now" and the gateway rejects events from the future
// (at 2,000 a 2,400 events/s run had 47 % of its events rejected).
const closedLoopRateGuess = 6000

// IngestCmd drives the gateway.
type IngestCmd struct {
	World        WorldFlags    `embed:""`
	Neo4j        Neo4jFlags    `embed:""`
	Output       OutputFlags   `embed:""`
	URL          string        `help:"Gateway base URL." default:"http://127.0.0.1:8080"`
	Token        string        `help:"Producer bearer token (empty: no Authorization header)." default:"" env:"HWLOAD_TOKEN"`
	Rate         float64       `help:"Target events/s (open loop); 0 runs closed loop as fast as answered." default:"0"`
	Concurrency  int           `help:"Requests in flight." default:"16"`
	Batch        int           `help:"Events per request (>1 uses the batch endpoint)." default:"1"`
	Attempts     int           `help:"Attempts per request when answered 429/503." default:"5"`
	Duration     time.Duration `help:"How long to send (5m+ for the real benchmark)." default:"30s"`
	Drain        time.Duration `help:"How long to wait for projection after sending stops." default:"60s"`
	PollEvery    time.Duration `help:"Visibility and lag sampling period." default:"250ms"`
	PollBatch    int           `help:"eventIds per visibility query." default:"500"`
	VisibleShare float64       `help:"Share of accepted events whose send-to-visible latency is measured (a fixed hash sample; polling every event loads the Neo4j under test)." default:"0.05"`
	FinishRuns   bool          `help:"After --duration, send the rest of the runs already started (for a warm-up run: no run is left without its terminal event)."`
	Brokers      string        `help:"Kafka brokers for consumer-lag sampling (empty: no lag)." default:"127.0.0.1:9092"`
	Topic        string        `help:"Raw-event topic." default:"headwater.events"`
	Group        string        `help:"Projector consumer group." default:"headwater-projector"`
}

// Run sends, measures and writes the result.
func (c *IngestCmd) Run(e *env) error {
	cfg, err := c.World.config(e.now())
	if err != nil {
		return err
	}
	rate := c.Rate
	if rate == 0 {
		rate = closedLoopRateGuess
	}
	w, err := c.World.world(startFor(cfg, rate*c.Duration.Seconds(), e.now()))
	if err != nil {
		return err
	}
	store, err := c.Neo4j.open(e, 8)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close(e.ctx) }()
	var lag drive.LagReader
	if c.Brokers != "" {
		kl, err := drive.NewKafkaLag(strings.Split(c.Brokers, ","), c.Group, c.Topic, sink.ProducerConfig())
		if err != nil {
			e.log.Warn("no consumer-lag sampling", "err", err)
		} else {
			defer func() { _ = kl.Close() }()
			lag = kl
		}
	}
	out := sink.NewHTTP(sink.HTTPConfig{BaseURL: c.URL, Token: c.Token, Batch: c.Batch > 1, MaxAttempts: c.Attempts})
	defer func() { _ = out.Close() }()
	icfg := drive.IngestConfig{Rate: c.Rate, Concurrency: c.Concurrency, Batch: c.Batch, Duration: c.Duration,
		Drain: c.Drain, PollEvery: c.PollEvery, PollBatch: c.PollBatch,
		VisibleShare: c.VisibleShare, FinishRuns: c.FinishRuns}
	d, err := drive.NewIngestDriver(icfg, w.NewStream(), out, &drive.Neo4jVisibility{Store: store}, lag, e.now)
	if err != nil {
		return err
	}
	started := e.now()
	res, runErr := d.Run(e.ctx)
	if runErr != nil {
		e.log.Warn("ingest run had transport errors", "err", runErr)
	}
	e.log.Info("ingest done", "mode", res.Mode, "accepted", res.Accepted, "acceptedPerSec", int(res.AcceptedPerSec),
		"visible", res.Visible, "p99VisibleMs", res.VisibleLatency.P99)
	shape := report.ShapeOf(w)
	if counts, err := history.ReadCounts(e.ctx, store, w.Config.Prefix); err == nil {
		shape.Counts = &counts
	} else {
		e.log.Warn("counts not read", "err", err)
	}
	gen := res.Generated
	return c.Output.finish(e, report.Result{Kind: report.KindIngest, StartedAt: started, Shape: shape,
		Ingest: &res, Generated: &gen})
}
