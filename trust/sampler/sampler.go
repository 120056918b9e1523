// Package sampler computes every trust signal for everything on an interval, sets the Prometheus gauges of each
// (headwater_trust_*) and stores one trend point per signal (trust.LabelSample) for `CoverageFigure.trend`
// (docs/trust.md "Trend"). It is the trust signals' only Prometheus dependency and their only writer (ADR 0034).
//
// Invariants: a sample is computed without permission filtering (metrics are an operator channel on their own
// listener; trend points are served only to callers who may describe everything); points older than
// SampleRetention are deleted with each write.
package sampler

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/obs"
	"github.com/headwater-data/headwater/trust"
)

// SampleRetention is how long trend points are kept.
const SampleRetention = 30 * 24 * time.Hour

// samplerPrincipal names the sampler in logs; it computes with authz.AllowAll (metrics are an operator
// channel on their own listener, and trend points are served only to callers who may describe everything).
var samplerPrincipal = authz.Principal{Subject: "headwater-trust-sampler", Kind: "service"}

// Metrics are the gauges of every signal for everything, set by the sampler.
type Metrics struct {
	num, den, ratio *prometheus.GaugeVec
	group           *prometheus.GaugeVec
	groupDen        *prometheus.GaugeVec
	seconds         prometheus.Gauge
	failures        prometheus.Counter
}

// NewMetrics registers the gauges with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	gv := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return obs.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
	}
	return &Metrics{
		num:      gv("headwater_trust_numerator", "Numerator of a trust signal, for everything (docs/trust.md).", "signal"),
		den:      gv("headwater_trust_denominator", "Denominator of a trust signal, for everything.", "signal"),
		ratio:    gv("headwater_trust_ratio", "Numerator over denominator of a trust signal (absent without a denominator).", "signal"),
		group:    gv("headwater_trust_group_numerator", "Numerator of a signal per criticality, producer or rule.", "signal", "dimension", "key"),
		groupDen: gv("headwater_trust_group_denominator", "Denominator of a signal per criticality, producer or rule.", "signal", "dimension", "key"),
		seconds: obs.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_trust_sample_seconds",
			Help: "Time the last sample of every signal took."})),
		failures: obs.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: "headwater_trust_sample_failures_total",
			Help: "Samples of the trust signals that failed."})),
	}
}

// metricDimensions are the group dimensions exported as labels (namespaces are not: unbounded cardinality).
var metricDimensions = map[string]bool{"criticality": true, "producer": true, "rule": true}

func (m *Metrics) set(f *trust.Figure) {
	sig := string(f.Signal)
	m.num.WithLabelValues(sig).Set(float64(f.Numerator))
	m.den.WithLabelValues(sig).Set(float64(f.Denominator))
	if r := f.Ratio(); r != nil {
		m.ratio.WithLabelValues(sig).Set(*r)
	} else {
		m.ratio.DeleteLabelValues(sig)
	}
	m.group.DeletePartialMatch(prometheus.Labels{"signal": sig})
	m.groupDen.DeletePartialMatch(prometheus.Labels{"signal": sig})
	for _, g := range f.Groups {
		if metricDimensions[g.Dimension] {
			m.group.WithLabelValues(sig, g.Dimension, g.Key).Set(float64(g.Numerator))
			m.groupDen.WithLabelValues(sig, g.Dimension, g.Key).Set(float64(g.Denominator))
		}
	}
}

// Store is where the trend points are written (truststore.Store).
type Store interface {
	StoreSamples(ctx context.Context, points []map[string]any, before int64) error
}

// Sampler recomputes every signal for everything on an interval, sets the gauges and stores trend points.
type Sampler struct {
	svc     *trust.Service
	store   Store
	metrics *Metrics
	log     *slog.Logger
}

// New returns the sampler of svc's signals (computed without permission filtering).
func New(svc *trust.Service, store Store, m *Metrics, log *slog.Logger) *Sampler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sampler{svc: svc.Unfiltered(), store: store, metrics: m, log: log}
}

// Run samples every interval (the service's SampleInterval; 0 returns at once) until ctx ends.
func (s *Sampler) Run(ctx context.Context) error {
	every := s.svc.Config().SampleInterval
	if every <= 0 {
		return nil
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.Sample(ctx); err != nil && ctx.Err() == nil {
			s.metrics.failures.Inc()
			s.log.Warn("trust sample failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sample computes every signal once, sets the gauges and stores one trend point per signal.
func (s *Sampler) Sample(ctx context.Context) error {
	began := time.Now()
	rep, err := s.svc.Report(ctx, samplerPrincipal, trust.Query{})
	if err != nil {
		return err
	}
	var points []map[string]any
	for _, sig := range trust.Signals() {
		f, err := rep.Figure(ctx, sig)
		if err != nil {
			return err
		}
		s.metrics.set(f)
		points = append(points, map[string]any{"key": string(sig) + "@" + itoa64(ms(rep.Now)), "signal": string(sig),
			"at": ms(rep.Now), "num": int64(f.Numerator), "den": int64(f.Denominator)})
	}
	s.metrics.seconds.Set(time.Since(began).Seconds())
	return s.store.StoreSamples(ctx, points, ms(rep.Now.Add(-SampleRetention)))
}

func itoa64(v int64) string { return fmt.Sprint(v) }

func ms(t time.Time) int64 { return t.UnixMilli() }
