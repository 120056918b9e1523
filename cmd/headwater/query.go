package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/canary"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/catalog/eventstatus"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/agreement"
	"github.com/headwater-data/headwater/lineage/release"
	"github.com/headwater-data/headwater/search"
)

// query is the query side the GraphQL handler calls.
type query struct {
	lineage *lineage.Service
	catalog *catalog.Catalog
	search  *search.Searcher
	events  *eventstatus.Service
}

// queryServices wires the query side: the catalog (lookups), event status and quarantine over it, search over it, and the lineage
// service over it with the Redis cache (nil rdb: no cache), all under the same permission policy. All seal their
// cursors with the same key (lineage.cursor-key). ts gives the lineage answers their trust gaps (nil: none); gov
// the tag classes of piiFlow.
func queryServices(store *graph.Store, rdb *redis.Client, lc lineage.Config, sc search.Config,
	canon catalog.Canonicalizer, policy authz.Policy, red *authz.Redactor, log *slog.Logger,
	reg prometheus.Registerer, ts lineage.TrustSource, gov governance.Config) (query, error) {
	cat, err := catalog.New(store, catalog.Options{Policy: policy, Redactor: red, Canon: canon, Clock: time.Now,
		Log: log})
	if err != nil {
		return query{}, err
	}
	srch, err := search.New(store, cat, search.Options{Config: sc, Policy: policy, Clock: time.Now, CursorKey: lc.CursorKey})
	if err != nil {
		return query{}, err
	}
	svc, err := lineage.NewService(store, lineage.Options{Config: lc, Cache: cache.New(rdb, reg, log), Policy: policy,
		Redactor: red, Catalog: cat, Clock: time.Now, Log: log, Trust: ts, Governance: gov})
	if err != nil {
		return query{}, err
	}
	events := eventstatus.New(store, cat, eventstatus.Options{Policy: policy, CursorKey: lc.CursorKey})
	return query{lineage: svc, catalog: cat, search: srch, events: events}, nil
}

// canaryChecker checks the registered canaries with a lineage service and catalog of their own that see
// everything (a canary is about the graph, not about a caller), without the caches and the trust gaps.
func canaryChecker(store *graph.Store, lc lineage.Config, canon catalog.Canonicalizer, log *slog.Logger) (*canary.Checker, error) {
	cat, err := catalog.New(store, catalog.Options{Policy: authz.AllowAll{}, Canon: canon, Clock: time.Now, Log: log})
	if err != nil {
		return nil, err
	}
	svc, err := lineage.NewService(store, lineage.Options{Config: lc, Policy: authz.AllowAll{}, Catalog: cat, Clock: time.Now, Log: log})
	if err != nil {
		return nil, err
	}
	return canary.NewChecker(svc, cat, canaries.NewStore(store), time.Now, log), nil
}

// releaseImpacts wires the pre-release impact: the current declarations read from the graph through the
// caller's view of the catalog, the impact through the caller's lineage service (ADR 0056).
// The declared-versus-observed check uses the lineage staleness rule (lc.StaleMin, lc.StaleFactor; ADR 0069).
func releaseImpacts(store *graph.Store, q query, lc lineage.Config, log *slog.Logger) *declare.ImpactService {
	a := release.NewAssessor(q.lineage, q.catalog, time.Now)
	assess := func(ctx context.Context, project, dsNS string, diff *api.ReleaseDiff, owners map[string]string,
		exposures map[string]api.AffectedExposure) (*api.ReleaseImpact, error) {
		return a.Assess(ctx, release.Input{Project: project, DatasetNamespace: dsNS, Diff: diff, Owners: owners, Exposures: exposures})
	}
	ck := agreement.NewChecker(store, q.catalog, agreement.Config{StaleMin: lc.StaleMin, StaleFactor: lc.StaleFactor}, time.Now)
	md := func(r *api.ReleaseImpact) string { return release.Markdown(r, nil) }
	return declare.NewImpactService(store, q.catalog, assess, ck.Check, md, time.Now, log)
}
