package cache

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests *prometheus.CounterVec
	hits     *prometheus.CounterVec
	errors   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	return &metrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_requests_total",
			Help: "Cache lookups by tier (nb: neighbour lists, res: results)."}, []string{"tier"})),
		hits: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_hits_total",
			Help: "Cache lookups answered by a valid entry, by tier."}, []string{"tier"})),
		errors: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_cache_errors_total",
			Help: "Redis errors on the cache path (answers were served without the cache)."}, []string{"tier", "op"})),
	}
}

// register registers c, reusing an identical collector already registered (one process, several handlers).
func register(reg prometheus.Registerer, c *prometheus.CounterVec) *prometheus.CounterVec {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				return existing
			}
		}
	}
	return c
}
