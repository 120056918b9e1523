package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authn/exchange"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/canary"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/archive"
	"github.com/headwater-data/headwater/ingest/consumer"
	"github.com/headwater-data/headwater/ingest/identcheck"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/obs"
)

// limitsConfig exposes olevent.Limits as settings.
type limitsConfig struct {
	MaxFacets      int           `help:"Most facets per run, job or dataset." default:"100" env:"HEADWATER_EVENT_MAX_FACETS" yaml:"maxFacets"`
	MaxJSONDepth   int           `help:"Deepest JSON nesting of an event." default:"64" env:"HEADWATER_EVENT_MAX_JSON_DEPTH" yaml:"maxJsonDepth"`
	MaxStringBytes int           `help:"Longest JSON string value in an event." default:"1048576" env:"HEADWATER_EVENT_MAX_STRING_BYTES" yaml:"maxStringBytes"`
	MaxDatasets    int           `help:"Most inputs plus outputs in one event." default:"1000" env:"HEADWATER_EVENT_MAX_DATASETS" yaml:"maxDatasets"`
	MaxFuture      time.Duration `help:"Reject eventTime later than now plus this." default:"10m" env:"HEADWATER_EVENT_MAX_FUTURE" yaml:"maxFuture"`
	Horizon        time.Duration `help:"Reject eventTime earlier than now minus this." default:"9600h" env:"HEADWATER_EVENT_HORIZON" yaml:"horizon"`
}

func (l limitsConfig) limits() olevent.Limits {
	return olevent.Limits{MaxFacetsPerEntity: l.MaxFacets, MaxJSONDepth: l.MaxJSONDepth, MaxStringBytes: l.MaxStringBytes,
		MaxDatasets: l.MaxDatasets, MaxFuture: l.MaxFuture, Horizon: l.Horizon}
}

// Validate checks the limits under their setting names.
func (l limitsConfig) Validate() error {
	if err := l.limits().Validate(); err != nil {
		return fmt.Errorf("event limits (--event-*): %w", err)
	}
	return nil
}

// identityConfig exposes normalize.Config as settings.
type identityConfig struct {
	Environments map[string]string `help:"Namespace prefix to environment (prefix=env;...); longest prefix wins." env:"HEADWATER_IDENTITY_ENVIRONMENTS" mapsep:";" yaml:"environments"`
	DefaultEnv   string            `help:"Environment of namespaces no prefix matches." default:"default" env:"HEADWATER_IDENTITY_DEFAULT_ENV" yaml:"defaultEnv"`
}

func (c identityConfig) config() normalize.Config {
	return normalize.Config{Environments: c.Environments, DefaultEnv: c.DefaultEnv}
}

// Validate checks the identity settings.
func (c identityConfig) Validate() error {
	if err := c.config().Validate(); err != nil {
		return fmt.Errorf("identity (--identity-*): %w", err)
	}
	return nil
}

// pipeline is the projection side shared by serve, ingest and replay.
type pipeline struct {
	store     *graph.Store
	rdb       *redis.Client
	decoder   *identcheck.Decoder // the gateway's and the consumer's: the envelope rules, then every identity
	norm      *normalize.Normalizer
	projector *project.Projector
	gens      *cache.Generations
	touched   *canary.TouchHook // the node keys each committed projection transaction touched, to the checker
}

func openPipeline(ctx context.Context, n graph.Config, rdb *redis.Client, lim limitsConfig, id identityConfig,
	log *slog.Logger, reg prometheus.Registerer) (*pipeline, error) {
	store, err := graph.Open(ctx, n)
	if err != nil {
		return nil, err
	}
	if err := store.CheckSchema(ctx); err != nil {
		_ = store.Close(context.Background())
		return nil, err
	}
	dec, err := decode.NewDecoder(lim.limits(), time.Now)
	if err != nil {
		return nil, err
	}
	norm, err := normalize.New(id.config())
	if err != nil {
		return nil, err
	}
	p := &pipeline{store: store, rdb: rdb, decoder: identcheck.New(dec, norm), norm: norm}
	var bumper project.GenerationBumper = noBump{}
	if rdb != nil {
		p.gens = cache.NewGenerations(rdb)
		bumper = p.gens
	}
	p.touched = canary.NewTouchHook(bumper)
	p.projector, err = project.New(store, norm, p.touched, log, reg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pipeline) close() { _ = p.store.Close(context.Background()) }

// consumer builds the Kafka consumer over this pipeline.
func (p *pipeline) consumer(cc consumer.Config, kc kafkaio.Config, arch *archive.Dir, q *kafkaio.Producer,
	guard *producecheck.Guard, log *slog.Logger, reg prometheus.Registerer) *consumer.Consumer {
	d := consumer.Deps{Projector: p.projector, Archive: arch, Decoder: p.decoder, Quarantine: q, QStore: p.store,
		Health: p.store, Log: log, Metrics: consumer.NewMetrics(reg), Now: time.Now, Guard: guard}
	if p.gens != nil {
		d.Epoch = p.gens
	}
	d.AfterProject = crashFailpoint(log, crashFailpointEnv)
	d.BeforeProject = crashFailpoint(log, crashBeforeFailpointEnv)
	p.projector.SetMemoryBounds(cc.MemoryBounds())
	return consumer.New(cc, kc, d)
}

// authMiddleware authenticates every request but the open paths (API tokens and OIDC/JWT bearer tokens). tokens
// must be the store the token management API revokes through, so a revocation on this server applies at once.
func authMiddleware(c authn.Config, tokens *apitoken.Store, log *slog.Logger, reg prometheus.Registerer) (func(http.Handler) http.Handler, *authn.Authenticator, error) {
	a, err := authn.NewAuthenticator(c, tokens, &http.Client{Timeout: c.HTTPTimeout}, time.Now, log)
	if err != nil {
		return nil, nil, err
	}
	a = a.WithMetrics(authn.NewMetrics(reg))
	open := authn.DefaultOpen()
	// the token exchange authenticates its request by the subject_token it carries (RFC 8693; ADR 0051)
	return authn.Middleware(a, func(r *http.Request) bool { return open(r) || exchange.Open(r) }, log), a, nil
}

// noBump is the generation bumper when the cache is off: there is nothing to invalidate.
type noBump struct{}

func (noBump) Bump(context.Context, []string) error { return nil }

// readinessChecks are /readyz's dependencies: Neo4j and Kafka (required), Redis (optional: without it answers are
// slower, never wrong, so it shows as degraded and the instance stays in rotation), and the archive when the
// process runs the consumer (required: the consumer projects nothing it could not archive).
func readinessChecks(store *graph.Store, rdb *redis.Client, kc kafkaio.Config, arch *archive.Dir) []obs.Check {
	checks := []obs.Check{
		{Name: "neo4j", Fn: store.Ping},
		{Name: "kafka", Fn: func(ctx context.Context) error { return kafkaio.Ping(ctx, kc) }},
	}
	if rdb != nil {
		checks = append(checks, obs.Check{Name: "redis", Fn: func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
			Optional: true})
	}
	if arch != nil {
		checks = append(checks, obs.Check{Name: "archive", Fn: arch.Ping})
	}
	return checks
}

// crashFailpointEnv names the test-only failpoint: set to N, the process SIGKILLs itself after the N-th batch is
// committed in Neo4j and before its Kafka offsets are committed (the crash window the projection must survive).
// crashBeforeFailpointEnv: set to N, it SIGKILLs itself when the N-th batch, archived, is about to be projected
// (nothing of it in Neo4j, its offsets not committed: with no replay point yet, only the offset rule re-delivers it).
const (
	crashFailpointEnv       = "HEADWATER_TEST_CRASH_AFTER_BATCHES"
	crashBeforeFailpointEnv = "HEADWATER_TEST_CRASH_BEFORE_BATCH"
)

func crashFailpoint(log *slog.Logger, env string) func() {
	n, err := strconv.Atoi(os.Getenv(env))
	if err != nil || n <= 0 {
		return nil
	}
	log.Warn("crash failpoint armed", "failpoint", env, "batch", n)
	var done atomic.Int64
	return func() {
		if done.Add(1) >= int64(n) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}

// closeLogged closes one component at shutdown and logs a failure: a deferred Close has no caller left to return
// its error to, and an unflushed producer or archive segment must not fail silently.
func closeLogged(log *slog.Logger, what string, closeFn func() error) {
	if err := closeFn(); err != nil {
		log.Warn("close failed", "component", what, "err", err)
	}
}
