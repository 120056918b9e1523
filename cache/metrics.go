package cache

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/internal/obs"
)

type metrics struct {
	requests *prometheus.CounterVec
	hits     *prometheus.CounterVec
	errors   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		requests: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_requests_total",
			Help: "Cache lookups by tier (nb: neighbour lists, res: results)."}, []string{"tier"})),
		hits: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_hits_total",
			Help: "Cache lookups answered by a valid entry, by tier."}, []string{"tier"})),
		errors: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_errors_total",
			Help: "Redis errors on the cache path (answers were served without the cache)."}, []string{"tier", "op"})),
	}
}
