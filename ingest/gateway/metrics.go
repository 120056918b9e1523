package gateway

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the gateway's Prometheus instruments.
type Metrics struct {
	events         *prometheus.CounterVec
	facetIssues    *prometheus.CounterVec
	rateLimited    *prometheus.CounterVec
	unavailable    prometheus.Counter
	produceSeconds prometheus.Histogram
	shed           prometheus.Counter
	inFlightBytes  prometheus.Gauge
	fenced         prometheus.Counter
}

// NewMetrics registers the gateway's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_gateway_events_total",
			Help: "Events received by the gateway, by producer principal, outcome and rejection rule."}, []string{"principal", "outcome", "rule"}),
		facetIssues: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_gateway_facet_issues_total",
			Help: "Malformed interpreted facets kept raw and not interpreted."}, []string{"principal"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_gateway_rate_limited_total",
			Help: "Requests answered 429."}, []string{"principal"}),
		unavailable: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_gateway_unavailable_total",
			Help: "Requests answered 503 because Kafka did not acknowledge."}),
		produceSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_gateway_produce_seconds",
			Help: "Time for Kafka to acknowledge a request's messages.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
	}
	m.shed = prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_gateway_shed_total",
		Help: "Requests answered 503 because the in-flight byte budget (gateway.max-in-flight-bytes) was full."})
	m.inFlightBytes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_gateway_in_flight_bytes",
		Help: "Request body bytes reserved by requests in flight."})
	m.fenced = prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_gateway_fenced_total",
		Help: "Submissions refused by their fence right before producing, nothing produced (ADR 0087: a catalog sync whose lease is no longer its own)."})
	reg.MustRegister(m.events, m.facetIssues, m.rateLimited, m.unavailable, m.produceSeconds, m.shed, m.inFlightBytes, m.fenced)
	return m
}
