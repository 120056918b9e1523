package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/report"
	"github.com/headwater-data/headwater/loadtest/sink"
)

// SinkFlags choose where events go.
type SinkFlags struct {
	Sink        string `help:"Where events go: file, http or kafka." enum:"file,http,kafka" default:"file"`
	File        string `help:"NDJSON output for --sink=file ('-' is stdout)." default:"-"`
	URL         string `help:"Gateway base URL for --sink=http." default:"http://127.0.0.1:8080"`
	Token       string `help:"Bearer token for the gateway (empty: no Authorization header)." default:"" env:"HWLOAD_TOKEN"`
	Batch       int    `help:"Events per request (http: >1 uses /api/v1/lineage/batch) or per Kafka produce call." default:"1"`
	Attempts    int    `help:"HTTP attempts per request when answered 429/503 (honours Retry-After)." default:"5"`
	Brokers     string `help:"Kafka brokers, comma-separated." default:"127.0.0.1:9092" env:"HEADWATER_KAFKA_BROKERS"`
	Topic       string `help:"Kafka topic of raw events." default:"headwater.events"`
	CreateTopic bool   `help:"Create the Kafka topic (replication 1) if missing." default:"false"`
	Partitions  int32  `help:"Partitions when creating the topic." default:"6"`
}

func (f SinkFlags) open() (sink.Sink, error) {
	switch f.Sink {
	case "http":
		return sink.NewHTTP(sink.HTTPConfig{BaseURL: f.URL, Token: f.Token, Batch: f.Batch > 1, MaxAttempts: f.Attempts}), nil
	case "kafka":
		return sink.NewKafka(sink.KafkaConfig{Brokers: strings.Split(f.Brokers, ","), Topic: f.Topic,
			CreateTopic: f.CreateTopic, Partitions: f.Partitions})
	}
	var w io.WriteCloser = nopCloser{os.Stdout}
	if f.File != "-" {
		fh, err := os.Create(f.File)
		if err != nil {
			return nil, fmt.Errorf("--file: %w", err)
		}
		w = fh
	}
	return sink.NewFile(w), nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// GenCmd generates a fixed number of events.
type GenCmd struct {
	World  WorldFlags `embed:""`
	Sinks  SinkFlags  `embed:""`
	Events int        `help:"Number of events to generate." default:"10000"`
	Stats  string     `help:"Also write a result JSON with the shape statistics to this path (empty: none)." default:""`
}

// Run generates and delivers the events, then reports the shape statistics.
func (c *GenCmd) Run(e *env) error {
	cfg, err := c.World.config(e.now())
	if err != nil {
		return err
	}
	w, err := c.World.world(startFor(cfg, float64(c.Events), e.now()))
	if err != nil {
		return err
	}
	out, err := c.Sinks.open()
	if err != nil {
		return err
	}
	s := w.NewStream()
	rejected, err := send(e, out, s, c.Events, max(1, c.Sinks.Batch))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st := s.Stats()
	e.log.Info("generated", "events", st.Events, "runs", st.Runs, "rejected", rejected, "eventsPerRun",
		fmt.Sprintf("%.2f", st.EventsPerRun()), "meanBytes", int(st.MeanBytes()), "columnShare",
		fmt.Sprintf("%.3f", st.ColumnLineageShare()))
	if c.Stats == "" {
		return nil
	}
	return OutputFlags{Out: c.Stats, Charts: true}.finish(e, report.Result{Kind: report.KindGen, StartedAt: e.now(),
		Shape: report.ShapeOf(w), Generated: &st})
}

func send(e *env, out sink.Sink, s *gen.Stream, n, batch int) (int, error) {
	rejected := 0
	for sent := 0; sent < n; {
		evs := make([]gen.Event, min(batch, n-sent))
		for i := range evs {
			evs[i] = s.Next()
		}
		res, err := out.Send(e.ctx, evs)
		if err != nil {
			return rejected, err
		}
		for _, r := range res {
			if r.Err != nil {
				rejected++
				if rejected <= 5 {
					e.log.Warn("event rejected", "err", r.Err)
				}
			}
		}
		sent += len(evs)
	}
	return rejected, nil
}
