package main

import (
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/gen"
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
	World        WorldFlags     `embed:""`
	Neo4j        Neo4jFlags     `embed:""`
	Output       OutputFlags    `embed:""`
	URL          string         `help:"Gateway base URL." default:"http://127.0.0.1:8080"`
	Token        string         `help:"Producer bearer token (empty: no Authorization header)." default:"" env:"HWLOAD_TOKEN"`
	Principal    string         `help:"The producer principal the token is for: Event nodes are keyed by principal and eventId (empty: bare ids)." default:""`
	Rate         float64        `help:"Target events/s (open loop); 0 runs closed loop as fast as answered." default:"0"`
	Concurrency  int            `help:"Requests in flight." default:"16"`
	Batch        int            `help:"Events per request (>1 uses the batch endpoint)." default:"1"`
	Attempts     int            `help:"Attempts per request when answered 429/503." default:"5"`
	Duration     time.Duration  `help:"How long to send (5m+ for the real benchmark)." default:"30s"`
	Drain        time.Duration  `help:"How long to wait for projection after sending stops." default:"60s"`
	PollEvery    time.Duration  `help:"Visibility and lag sampling period (1 Hz: polling the systems under test faster loads what it measures)." default:"1s"`
	PollBatch    int            `help:"eventIds per visibility query." default:"500"`
	VisibleShare float64        `help:"Share of accepted events whose send-to-visible latency is measured (a fixed hash sample; polling every event loads the Neo4j under test)." default:"0.05"`
	FinishRuns   bool           `help:"After --duration, send the rest of the runs already started (for a warm-up run: no run is left without its terminal event)."`
	Brokers      string         `help:"Kafka brokers for consumer-lag sampling when --metrics-url is empty (empty: no lag)." default:"127.0.0.1:9092"`
	MetricsURL   string         `help:"The projector's Prometheus endpoint: consumer lag, projected events and receive-to-visible latency come from it instead of polling Kafka (empty: off)." default:""`
	CPUPid       map[string]int `help:"Processes whose CPU the result reports per projected event, as name=pid (e.g. headwater=1,neo4j=2,kafka=3,redis=4); hwload itself is always reported, apart." name:"cpu-pid"`
	Neo4jTxDir   string         `help:"Neo4j's transaction-log directory (data/transactions/neo4j): the result reports log bytes per projected event (empty: off)." name:"neo4j-tx-dir" default:""`
	Corpus       string         `help:"Pre-generate the stream into this file before sending (read it instead when it exists), so the generator's CPU is off the measured path." default:""`
	CorpusEvents int            `help:"Events in a new corpus (0: rate x duration, and 1,500/s x duration closed loop)." default:"0"`
	Topic        string         `help:"Raw-event topic." default:"headwater.events"`
	Group        string         `help:"Projector consumer group." default:"headwater-projector"`
}

// corpusClosedLoopRate sizes a closed-loop run's corpus (events/s × duration): above this machine's ceiling.
const corpusClosedLoopRate = 1500

// source is the world's stream, or with --corpus the corpus file (generated first when missing).
func (c *IngestCmd) source(e *env, w *gen.World) (drive.Source, error) {
	if c.Corpus == "" {
		return drive.StreamSource(w.NewStream()), nil
	}
	if _, err := os.Stat(c.Corpus); err == nil {
		corpus, err := drive.ReadCorpus(c.Corpus)
		if err == nil {
			e.log.Info("corpus read", "path", c.Corpus, "events", len(corpus.Main), "pending", len(corpus.Pending))
		}
		return corpus, err
	}
	n := c.CorpusEvents
	if n <= 0 {
		rate := c.Rate
		if rate == 0 {
			rate = corpusClosedLoopRate
		}
		n = int(rate*c.Duration.Seconds()) + c.Batch
	}
	corpus := drive.Generate(w.NewStream(), n, c.FinishRuns)
	if err := drive.WriteCorpus(c.Corpus, corpus); err != nil {
		return nil, err
	}
	e.log.Info("corpus generated", "path", c.Corpus, "events", len(corpus.Main), "pending", len(corpus.Pending))
	return corpus, nil
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
	if c.MetricsURL != "" {
		lag = &drive.ProjectorLag{Client: &http.Client{Timeout: 5 * time.Second}, URL: c.MetricsURL, Topic: c.Topic}
	} else if c.Brokers != "" {
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
	src, err := c.source(e, w)
	if err != nil {
		return err
	}
	d, err := drive.NewIngestDriverFrom(icfg, src, out, &drive.Neo4jVisibility{Store: store, Principal: c.Principal}, lag, e.now)
	if err != nil {
		return err
	}
	if c.MetricsURL != "" || len(c.CPUPid) > 0 || c.Neo4jTxDir != "" {
		d.SetMeter(&drive.SystemMeter{Procs: c.CPUPid, MetricsURL: c.MetricsURL, TxLogDir: c.Neo4jTxDir})
	}
	started := e.now()
	res, runErr := d.Run(e.ctx)
	if runErr != nil {
		e.log.Warn("ingest run had transport errors", "err", runErr)
	}
	e.log.Info("ingest done", "mode", res.Mode, "accepted", res.Accepted, "acceptedPerSec", int(res.AcceptedPerSec),
		"visible", res.Visible, "p99VisibleMs", res.VisibleLatency.P99)
	if res.Cost != nil {
		e.log.Info("ingest cost", "projectedPerSec", int(res.Cost.ProjectedPerSec), "allInMsPerEvent", res.Cost.AllInMsPerEvent,
			"cpuMsPerEvent", res.Cost.CPUMsPerEvent, "txLogKBPerEvent", res.Cost.TxLogKBPerEvent,
			"receiveToVisibleP99Ms", res.Cost.ReceiveToVisible.P99, "lagTrendPerSec", res.Cost.LagTrend)
	}
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
