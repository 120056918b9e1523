package grantpolicy

import "github.com/prometheus/client_golang/prometheus"

// PolicyMetrics are the grant policy's Prometheus instruments.
type PolicyMetrics struct {
	reloads     prometheus.Counter
	epoch       prometheus.Gauge
	epochErrors prometheus.Counter
}

// NewPolicyMetrics registers the grant policy's metrics on reg.
func NewPolicyMetrics(reg prometheus.Registerer) *PolicyMetrics {
	m := &PolicyMetrics{
		reloads: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_authz_grant_reloads_total",
			Help: "Times the grant state was reloaded and recompiled because the grant epoch moved."}),
		epoch: prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_authz_grant_epoch",
			Help: "Grant epoch of the evaluator in force."}),
		epochErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_authz_epoch_check_errors_total",
			Help: "Failed reads of the grant epoch or the grant state (the query then fails)."}),
	}
	reg.MustRegister(m.reloads, m.epoch, m.epochErrors)
	return m
}

func (m *PolicyMetrics) loaded(epoch int64) {
	if m != nil {
		m.reloads.Inc()
		m.epoch.Set(float64(epoch))
	}
}

func (m *PolicyMetrics) failed() {
	if m != nil {
		m.epochErrors.Inc()
	}
}
