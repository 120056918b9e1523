package guard

import (
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"
)

// Install composes the request guards on srv, in this order: the bounded transport (GET and POST only;
// per-principal concurrency, the process's in-flight bound, body and JSON-list limits), APQ over a byte-bounded LRU, the document limits (before
// validation), gqlgen's parse (token limit) and validation, the byte-bounded parsed-query cache, complexity and
// depth limits, the per-principal cost budget. lim must be valid (Limits.WithDefaults, Limits.Validate); reg
// receives the endpoint's cache and refusal metrics (nil: not registered).
func Install(srv *handler.Server, lim Limits, reg prometheus.Registerer) {
	m := newGraphQLMetrics(reg)
	srv.AddTransport(transport{lim: lim, gate: newPrincipalGate(lim.MaxConcurrent),
		admission: newAdmission(lim.MaxInFlight, lim.QueueWait, m.inFlight.Add), metrics: m})
	srv.AddTransport(unsupported{metrics: m})
	queries := newQueryCache(lim.QueryCacheBytes, m.cacheLookup("query"))
	srv.SetQueryCache(queries)
	srv.SetParserTokenLimit(lim.MaxTokens)
	srv.Use(extension.Introspection{})
	srv.Use(persistedQueries{extension.AutomaticPersistedQuery{Cache: newAPQCache(lim.APQCacheBytes, m.cacheLookup("apq"))}})
	srv.Use(documentLimits{lim: lim, parsed: queries})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.Use(depthLimit{max: MaxQueryDepth})
	srv.Use(newCostBudget(lim.CostPerSecond, lim.CostBurst, time.Now)) // wall time, not the data clock
}
