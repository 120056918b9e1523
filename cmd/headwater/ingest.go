package main

import (
	"context"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/consumer"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/obs"
	"github.com/headwater-data/headwater/internal/redisconn"
)

type ingestCmd struct {
	MetricsAddr string           `help:"Prometheus /metrics, /healthz and /readyz listener." default:"127.0.0.1:9091" env:"HEADWATER_INGEST_METRICS_ADDR"`
	Neo4j       graph.Config     `embed:"" prefix:"neo4j-"`
	Kafka       kafkaio.Config   `embed:"" prefix:"kafka-"`
	Redis       redisconn.Config `embed:"" prefix:"redis-"`
	Event       limitsConfig     `embed:"" prefix:"event-"`
	Identity    identityConfig   `embed:"" prefix:"identity-"`
	Consumer    consumer.Config  `embed:"" prefix:"consumer-"`
	Archive     archive.Config   `embed:"" prefix:"archive-"`
	Authz       authzConfig      `embed:"" prefix:"authz-"`
	HTTP        serverLimits     `embed:"" prefix:"http-"`
}

func (c ingestCmd) Run(rc *runCtx) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log, reg := rc.log, obs.NewRegistry()
	rdb := redisconn.Open(c.Redis)
	p, err := openPipeline(ctx, c.Neo4j, rdb, c.Event, c.Identity, log, reg)
	if err != nil {
		return err
	}
	defer p.close()
	if err := kafkaio.EnsureTopics(c.Kafka); err != nil {
		return err
	}
	producer, err := kafkaio.NewProducer(c.Kafka)
	if err != nil {
		return err
	}
	defer closeLogged(log, "producer", producer.Close)
	perms, err := p.permissions(ctx, c.Authz, c.Kafka, log, reg)
	if err != nil {
		return err
	}
	defer closeLogged(log, "permissions", perms.Close)
	arch, err := archive.OpenDir(c.Archive, time.Now)
	if err != nil {
		return err
	}
	defer closeLogged(log, "archive", arch.Close)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", obs.MetricsHandler(reg))
	obs.RegisterPprof(mux)
	mux.Handle("GET /healthz", obs.Healthz())
	mux.Handle("GET /readyz", obs.Readyz(readinessChecks(p.store, rdb, c.Kafka, arch), log))
	g, gctx := errgroup.WithContext(ctx)
	serveHTTP(g, gctx, c.HTTP.server(c.MetricsAddr, mux), 10*time.Second, log)
	cons := p.consumer(c.Consumer, c.Kafka, arch, producer, producecheck.New(perms.Policy, p.norm), log, reg)
	g.Go(func() error { return cons.Run(gctx) })
	log.Info("headwater consumer running", "group", c.Kafka.ConsumerGroup, "topics", c.Kafka.SourceTopics())
	return g.Wait()
}
