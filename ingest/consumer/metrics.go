package consumer

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the consumer's Prometheus instruments.
type Metrics struct {
	events           *prometheus.CounterVec
	quarantined      prometheus.Counter
	lag              *prometheus.GaugeVec
	batchSize        prometheus.Histogram
	batchSeconds     prometheus.Histogram
	eventToVisible   prometheus.Histogram
	receiveToVisible prometheus.Histogram
}

// NewMetrics registers the consumer's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	lat := prometheus.ExponentialBuckets(0.005, 2, 16)
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_consumer_events_total",
			Help: "Events handled by the consumer, by outcome."}, []string{"outcome"}),
		quarantined: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_consumer_quarantined_total",
			Help: "Messages the consumer sent to quarantine (invalid or poison)."}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "headwater_consumer_lag_messages",
			Help: "Messages behind the partition's high-water mark after the last committed batch."}, []string{"topic", "partition"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_consumer_batch_size",
			Help: "Messages per projected batch.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_consumer_batch_seconds",
			Help: "Time to archive, project and commit one batch.", Buckets: lat}),
		eventToVisible: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_consumer_event_time_to_visible_seconds",
			Help: "From an event's eventTime to its projection being visible.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 20)}),
		receiveToVisible: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "headwater_consumer_receive_to_visible_seconds",
			Help: "From the gateway's receive time to the projection being visible.", Buckets: lat}),
	}
	reg.MustRegister(m.events, m.quarantined, m.lag, m.batchSize, m.batchSeconds, m.eventToVisible, m.receiveToVisible)
	return m
}
