package guard

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/internal/obs"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// graphqlMetrics are the GraphQL endpoint's own metrics: its in-process caches and its refusals.
type graphqlMetrics struct {
	cacheRequests *prometheus.CounterVec
	cacheHits     *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	inFlight      prometheus.Gauge
}

func newGraphQLMetrics(reg prometheus.Registerer) *graphqlMetrics {
	return &graphqlMetrics{
		cacheRequests: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_graphql_cache_requests_total",
			Help: "Lookups in the GraphQL in-process caches (cache: query, apq)."}, []string{"cache"})),
		cacheHits: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_graphql_cache_hits_total",
			Help: "Lookups in the GraphQL in-process caches that found an entry."}, []string{"cache"})),
		refusals: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_graphql_refused_total",
			Help: "GraphQL requests refused by a request limit before gqlgen validated them, by rule."}, []string{"rule"})),
		inFlight: obs.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_graphql_in_flight",
			Help: "GraphQL requests holding one of the process's in-flight slots (graphql-max-in-flight)."})),
	}
}

func (m *graphqlMetrics) refused(rule refusalRule) { m.refusals.WithLabelValues(string(rule)).Inc() }

// refusedBy counts the refusal among an operation's errors, if any.
func (m *graphqlMetrics) refusedBy(errs gqlerror.List) {
	for _, e := range errs {
		if re, ok := errors.AsType[*RequestError](e); ok {
			m.refused(re.rule)
			return
		}
	}
}

// cacheLookup returns the lookup hook of one cache.
func (m *graphqlMetrics) cacheLookup(cache string) func(hit bool) {
	requests, hits := m.cacheRequests.WithLabelValues(cache), m.cacheHits.WithLabelValues(cache)
	return func(hit bool) {
		requests.Inc()
		if hit {
			hits.Inc()
		}
	}
}
