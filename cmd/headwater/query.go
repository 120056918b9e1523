package main

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage"
)

// queryServices wires the query side the GraphQL handler calls: the catalog (lookups, search, event status) and
// the lineage service over it, with the Redis cache (nil rdb: no cache) and the permission policy. Both seal
// their cursors with the same key (lineage.cursor-key).
func queryServices(store *graph.Store, rdb *redis.Client, lc lineage.Config, cc catalog.Config,
	canon catalog.Canonicalizer, policy authz.Policy, red *authz.Redactor, log *slog.Logger,
	reg prometheus.Registerer) (*lineage.Service, *catalog.Catalog, error) {
	cat, err := catalog.New(store, catalog.Options{Config: cc, Policy: policy, Redactor: red, Canon: canon,
		Clock: time.Now, Log: log, CursorKey: lc.CursorKey})
	if err != nil {
		return nil, nil, err
	}
	svc, err := lineage.NewService(store, lineage.Options{Config: lc, Cache: cache.New(rdb, reg, log), Policy: policy,
		Redactor: red, Catalog: cat, Clock: time.Now, Log: log})
	if err != nil {
		return nil, nil, err
	}
	return svc, cat, nil
}
