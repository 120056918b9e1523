package schedule

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/internal/obs"
)

// Metrics are the scheduled syncs' Prometheus series, per catalog.
type Metrics struct {
	leader      *prometheus.GaugeVec
	syncs       *prometheus.CounterVec
	seconds     *prometheus.HistogramVec
	events      *prometheus.CounterVec
	failures    *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	warnings    *prometheus.GaugeVec
	fenced      *prometheus.CounterVec
}

// NewMetrics registers the series with reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	cat := []string{"catalog"}
	return &Metrics{
		leader: obs.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "headwater_catalog_sync_leader",
			Help: "1 while this process holds the catalog's sync lease (one active syncer per catalog), else 0."}, cat)),
		syncs: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_catalog_syncs_total",
			Help: "Syncs of the catalog this process ran, by result (ok, failed)."}, []string{"catalog", "result"})),
		seconds: obs.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "headwater_catalog_sync_seconds",
			Help: "Time of one sync of the catalog (scan, graph read, publishing).", Buckets: prometheus.ExponentialBuckets(0.05, 3, 10)}, cat)),
		events: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_catalog_sync_events_total",
			Help: "Events the catalog's syncs published through the gateway."}, cat)),
		failures: obs.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "headwater_catalog_sync_consecutive_failures",
			Help: "Failed syncs of the catalog since its last success, as this process counted them while it held the lease."}, cat)),
		lastSuccess: obs.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "headwater_catalog_sync_last_success_timestamp_seconds",
			Help: "When a sync of the catalog last succeeded, by any process (from the lease); 0: never."}, cat)),
		warnings: obs.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "headwater_catalog_sync_warnings",
			Help: "What the catalog's last successful sync by this process did not send, by rule (ADR 0075: table properties carrying tags it cannot read)."},
			[]string{"catalog", "rule"})),
		fenced: obs.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_catalog_sync_fenced_total",
			Help: "Syncs of the catalog by this process whose batch the gateway refused because the lease was no longer theirs (ADR 0087); nothing of the batch was produced."}, cat)),
	}
}
