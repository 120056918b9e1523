package resolvers

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage"
)

// Deps is what the GraphQL handler needs; `headwater serve` builds it.
type Deps struct {
	Store      *graph.Store
	Redis      *redis.Client // nil: cache off
	Log        *slog.Logger
	Registerer prometheus.Registerer
	Lineage    lineage.Config
	Clock      func() time.Time
	// Canonicalizer canonicalises identifiers like ingestion does (nil: identity).
	Canonicalizer lineage.Canonicalizer
	// Policy decides visibility (nil: authz.AllowAll).
	Policy authz.Policy
}

// NewHandler returns the GraphQL endpoint (POST and GET); the caller chooses the mount path and attaches the
// principal to the request context (authz.WithPrincipal) before it.
func NewHandler(d Deps) (http.Handler, error) {
	if d.Store == nil {
		return nil, errors.New("resolvers: Deps.Store is required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	svc, err := lineage.NewService(d.Store, lineage.Options{Config: d.Lineage, Cache: cache.New(d.Redis, d.Registerer, d.Log),
		Policy: d.Policy, Canon: d.Canonicalizer, Clock: d.Clock, Log: d.Log})
	if err != nil {
		return nil, err
	}
	srv := newServer(&Resolver{svc: svc}, d.Log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(withLoaders(r.Context(), newLoaders(svc))))
	}), nil
}

// newServer is gqlgen's server in production shape: POST and GET only, parsed-query LRU, APQ over an LRU,
// introspection, complexity and depth limits, one error presenter.
func newServer(res *Resolver, log *slog.Logger) *handler.Server {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: res}))
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(newLRU[*ast.QueryDocument](queryCacheSize))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: newLRU[string](apqCacheSize)})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.Use(depthLimit{max: MaxQueryDepth})
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(recoverPanic(log))
	return srv
}
