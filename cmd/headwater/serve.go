package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authn/exchange"
	"github.com/headwater-data/headwater/authz/auditkafka"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/governance/flowexport"
	"github.com/headwater-data/headwater/governance/lease"
	"github.com/headwater-data/headwater/governance/mutation"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/consumer"
	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/obs"
	"github.com/headwater-data/headwater/internal/redisconn"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/resolvers"
	"github.com/headwater-data/headwater/resolvers/guard"
	"github.com/headwater-data/headwater/search"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/sampler"
	"github.com/headwater-data/headwater/trust/truststore"
	"github.com/headwater-data/headwater/web"
)

// httpConfig is the listeners' configuration.
type httpConfig struct {
	Addr            string        `help:"API listener (gateway, GraphQL, health)." default:"127.0.0.1:8080" env:"HEADWATER_HTTP_ADDR" yaml:"addr"`
	MetricsAddr     string        `help:"Prometheus /metrics listener (its own port)." default:"127.0.0.1:9090" env:"HEADWATER_HTTP_METRICS_ADDR" yaml:"metricsAddr"`
	ShutdownTimeout time.Duration `help:"Grace period to drain requests and the consumer batch on SIGTERM." default:"20s" env:"HEADWATER_HTTP_SHUTDOWN_TIMEOUT" yaml:"shutdownTimeout"`
	serverLimits    `embed:""`
}

// Validate checks the listener settings.
func (c httpConfig) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("http.addr: %q is not host:port", c.Addr)
	}
	if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
		return fmt.Errorf("http.metrics-addr: %q is not host:port", c.MetricsAddr)
	}
	if c.Addr == c.MetricsAddr {
		return errors.New("http.metrics-addr: must differ from http.addr (metrics have their own listener)")
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("http.shutdown-timeout: must be positive")
	}
	return c.serverLimits.Validate()
}

type serveCmd struct {
	HTTP     httpConfig       `embed:"" prefix:"http-"`
	Neo4j    graph.Config     `embed:"" prefix:"neo4j-"`
	Kafka    kafkaio.Config   `embed:"" prefix:"kafka-"`
	Redis    redisconn.Config `embed:"" prefix:"redis-"`
	Gateway  gateway.Config   `embed:"" prefix:"gateway-"`
	Event    limitsConfig     `embed:"" prefix:"event-"`
	Identity identityConfig   `embed:"" prefix:"identity-"`
	Consumer consumer.Config  `embed:"" prefix:"consumer-"`
	Archive  archive.Config   `embed:"" prefix:"archive-"`
	Lineage  lineage.Config   `embed:"" prefix:"lineage-"`
	Search   search.Config    `embed:"" prefix:"lineage-"`
	Auth     authn.Config     `embed:"" prefix:"auth-"`
	Authz    authzConfig      `embed:"" prefix:"authz-"`
	GraphQL  guard.Limits     `embed:"" prefix:"graphql-"`
	Trust    trust.Config     `embed:"" prefix:"trust-"`
	GovFile  string           `name:"governance-file" help:"YAML governance file: tag classes and their propagation rules for piiFlow (docs/governance.md); empty: the defaults." default:"" env:"HEADWATER_GOVERNANCE_FILE" yaml:"governanceFile"`
	Catalogs string           `name:"catalogs-file" help:"YAML catalogs file: Iceberg REST catalogs synced on a schedule, one active syncer per catalog among serve processes (docs/iceberg.md, ADR 0049); empty: none." default:"" env:"HEADWATER_CATALOGS_FILE" yaml:"catalogsFile"`
	RunIn    bool             `name:"consumer" help:"Also run the consumer in this process (single-machine deployment)." default:"true" negatable:"" env:"HEADWATER_CONSUMER"`
}

func (s serveCmd) Run(rc *runCtx) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log, reg := rc.log, obs.NewRegistry()
	rdb := redisconn.Open(s.Redis)
	p, err := openPipeline(ctx, s.Neo4j, rdb, s.Event, s.Identity, log, reg)
	if err != nil {
		return err
	}
	defer p.close()
	if err := kafkaio.EnsureTopics(s.Kafka); err != nil {
		return err
	}
	producer, err := kafkaio.NewProducer(s.Kafka)
	if err != nil {
		return err
	}
	defer closeLogged(log, "producer", producer.Close)
	perms, err := p.permissions(ctx, s.Authz, s.Kafka, log, reg)
	if err != nil {
		return err
	}
	defer closeLogged(log, "permissions", perms.Close)
	tokens := apitoken.NewStore(p.store, time.Now).WithCache(s.Auth.TokenCacheTTL)
	authenticate, authenticator, err := authMiddleware(s.Auth, tokens, log, reg)
	if err != nil {
		return err
	}

	auditReader, err := auditkafka.NewKafkaAuditReader(s.Kafka, s.Authz.AuditTopic)
	if err != nil {
		return err
	}
	defer closeLogged(log, "audit reader", auditReader.Close)

	trustSvc, err := trust.NewService(truststore.NewStore(p.store), perms.Policy, s.Trust, time.Now)
	if err != nil {
		return err
	}
	inv := registry.NewService(registry.NewStore(p.store), p.norm, perms.Policy, perms.Auditor, time.Now)
	gaps := gapsource.New(trustSvc, truststore.NewStore(p.store), time.Now)
	inv.OnChange(gaps.InventoryChanged)

	mux := http.NewServeMux()
	exchange.New(authenticator, tokens, perms.Policy, exchangeNamespace(p.norm), perms.Auditor, time.Now).Register(mux) // ADR 0051
	registry.NewHandler(inv, log).Register(mux)
	canaryReg := canaries.NewService(canaries.NewStore(p.store), p.norm, perms.Policy, perms.Auditor, time.Now)
	canaries.NewHandler(canaryReg, log).Register(mux)
	guard := producecheck.New(perms.Policy, p.norm)
	gw := gateway.New(s.Gateway, s.Kafka, p.decoder, producer, guard, gateway.NewMetrics(reg), log, time.Now)
	gw.Register(mux)
	gov, err := governance.LoadFile(s.GovFile)
	if err != nil {
		return err
	}
	q, err := queryServices(p.store, rdb, s.Lineage, s.Search, p.norm, perms.Policy, perms.Redactor, log, reg, gaps, gov)
	if err != nil {
		return err
	}
	// declared lineage through gw's path (ADR 0044); removed nodes withdrawn against the current declarations
	// as the caller sees them
	declare.NewHandler(gw, auditRecorder(perms.Auditor, time.Now), log).WithCurrent(p.store, q.catalog, time.Now).Register(mux)
	impacts := releaseImpacts(p.store, q, s.Lineage, log) // pre-release impact of dbt candidates (ADR 0056)
	impacts.Register(mux)
	gql, err := resolvers.NewHandler(resolvers.Deps{Lineage: q.lineage, Catalog: q.catalog, Search: q.search, Events: q.events,
		Log: log, Registerer: reg, Clock: time.Now, Auditor: perms.RequestAuditor, Manager: perms.Manager, AuditReader: auditReader,
		Limits: s.GraphQL, Tokens: apitoken.NewManager(tokens, perms.Policy, perms.Auditor, time.Now),
		Trust: trustSvc, Inventory: inv, Canaries: canaryReg, Release: impacts,
		// tag and block mutations through gw (ADR 0067), one at a time per dataset across processes (ADR 0081)
		Governance: mutation.New(q.catalog, gw, perms.Policy, time.Now).
			WithLease(lease.New(rdb, mutation.LeaseTTL, mutation.LeaseWait).WithMetrics(lease.NewMetrics(reg)),
				catalogread.New(p.store))})
	if err != nil {
		return err
	}
	mux.Handle("/graphql", gql)
	flowexport.NewHandler(q.lineage, perms.RequestAuditor, time.Now, log).Register(mux) // piiFlow for auditors (ADR 0055)
	mux.Handle("GET /graphiql", resolvers.GraphiQL("/graphql"))
	mux.Handle("GET /{$}", resolvers.GraphiQL("/graphql"))
	web.Register(mux) // the lineage explorer at /explore/ (docs/explorer.md)
	mux.Handle("GET /healthz", obs.Healthz())
	var arch *archive.Dir // only a process that runs the consumer writes the archive
	if s.RunIn {
		if arch, err = archive.OpenDir(s.Archive, time.Now); err != nil {
			return err
		}
		defer closeLogged(log, "archive", arch.Close)
	}
	catalogs, err := catalogScheduler(s.Catalogs, p.store, gw, log, reg)
	if err != nil {
		return err
	}
	mux.Handle("GET /readyz", obs.Readyz(append(readinessChecks(p.store, rdb, s.Kafka, arch), catalogs.Checks()...), log))

	metricsMux := http.NewServeMux()
	metricsMux.Handle("GET /metrics", obs.MetricsHandler(reg))
	obs.RegisterPprof(metricsMux) // profiles only on the operator's listener, never on the public API

	g, gctx := errgroup.WithContext(ctx)
	api := s.HTTP.server(s.HTTP.Addr, authenticate(mux))
	met := s.HTTP.server(s.HTTP.MetricsAddr, metricsMux)
	serveHTTP(g, gctx, api, s.HTTP.ShutdownTimeout, log)
	serveHTTP(g, gctx, met, s.HTTP.ShutdownTimeout, log)
	smp := sampler.New(trustSvc, truststore.NewStore(p.store), sampler.NewMetrics(reg), log)
	g.Go(func() error { return smp.Run(gctx) })
	checker, err := canaryChecker(p.store, s.Lineage, p.norm, log)
	if err != nil {
		return err
	}
	canaryReg.OnChange(checker.Recheck)
	p.touched.Listen(checker.Touched)
	g.Go(func() error { return checker.Run(gctx, s.Trust.CanaryInterval) })
	g.Go(func() error { return catalogs.Run(gctx) })
	if s.RunIn {
		c := p.consumer(s.Consumer, s.Kafka, arch, producer, guard, log, reg)
		g.Go(func() error { return c.Run(gctx) })
	}
	log.Info("headwater serving", "api", "http://"+s.HTTP.Addr, "graphql", "http://"+s.HTTP.Addr+"/graphql",
		"metrics", "http://"+s.HTTP.MetricsAddr+"/metrics", "consumer", s.RunIn)
	err = g.Wait()
	log.Info("headwater stopped")
	return err
}

// exchangeNamespace canonicalises a token exchange's namespace as the gateway canonicalises events' (job rules:
// URI-like namespaces get the dataset rules, opaque ones such as airflow-prod are kept), so the exchanged token's
// namespaces are the ones the produce check compares.
func exchangeNamespace(n *normalize.Normalizer) func(string) (string, error) {
	return func(ns string) (string, error) {
		c, _, err := n.Job(ns, "token-exchange")
		return c, err
	}
}

// serveHTTP runs srv until ctx ends, then drains it within grace.
func serveHTTP(g *errgroup.Group, ctx context.Context, srv *http.Server, grace time.Duration, log *slog.Logger) {
	g.Go(func() error {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("listen %s: %w", srv.Addr, err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		log.Info("draining http", "addr", srv.Addr)
		return srv.Shutdown(sctx)
	})
}
