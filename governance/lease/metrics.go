package lease

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the governance lease's Prometheus instruments (docs/operations.md, ADR 0088). Nil counts nothing.
type Metrics struct {
	nAcquired    prometheus.Counter
	nTakenOver   prometheus.Counter
	nBusy        prometheus.Counter
	nUnavailable prometheus.Counter
	nLost        prometheus.Counter
	nLeftPending prometheus.Counter
	wait         *prometheus.HistogramVec
}

// Outcomes of headwater_governance_lease_wait_seconds.
const (
	outcomeAcquired = "acquired"
	outcomeBusy     = "busy"
)

// NewMetrics registers the lease metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := &Metrics{
		nAcquired: c("headwater_governance_lease_acquired_total", "Governance leases acquired (a mutation may read and publish)."),
		nTakenOver: c("headwater_governance_lease_taken_over_total",
			"Governance leases acquired by taking over a pending lease whose event was projected or quarantined (also counted in acquired)."),
		nBusy: c("headwater_governance_lease_busy_total",
			"Governance leases not had within the wait (the mutation answered UNAVAILABLE, nothing sent)."),
		nUnavailable: c("headwater_governance_lease_unavailable_total",
			"Governance lease acquisitions Redis failed or was not configured for (the mutation answered UNAVAILABLE)."),
		nLost: c("headwater_governance_lease_lost_total",
			"Governance leases that lapsed or were taken while held (a renewal or the pend found the key not ours); should stay 0."),
		nLeftPending: c("headwater_governance_lease_left_pending_total",
			"Mutations answered before their event was projected, leaving the dataset's lease pending on that event."),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "headwater_governance_lease_wait_seconds",
			Help:    "Time a governance mutation waited for its dataset's lease, by outcome (acquired, busy).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}, []string{"outcome"}),
	}
	reg.MustRegister(m.nAcquired, m.nTakenOver, m.nBusy, m.nUnavailable, m.nLost, m.nLeftPending, m.wait)
	return m
}

func (m *Metrics) acquired(waited time.Duration) {
	if m != nil {
		m.nAcquired.Inc()
		m.wait.WithLabelValues(outcomeAcquired).Observe(waited.Seconds())
	}
}

func (m *Metrics) busy(waited time.Duration) {
	if m != nil {
		m.nBusy.Inc()
		m.wait.WithLabelValues(outcomeBusy).Observe(waited.Seconds())
	}
}

func (m *Metrics) tookOver() {
	if m != nil {
		m.nTakenOver.Inc()
	}
}

func (m *Metrics) unavailable() {
	if m != nil {
		m.nUnavailable.Inc()
	}
}

func (m *Metrics) lostOne() {
	if m != nil {
		m.nLost.Inc()
	}
}

func (m *Metrics) pendingLeft() {
	if m != nil {
		m.nLeftPending.Inc()
	}
}
