// Package sampler computes every trust signal for everything on an interval, sets the Prometheus gauges of each
// (headwater_trust_*) and stores one trend point per signal (trust.LabelSample) for `CoverageFigure.trend`
// (docs/trust.md "Trend"); every trend-scope interval it also stores one point per signal for each namespace,
// criticality, producer and configured scope (trust.LabelScopeSample, ADR 0043). It is the trust signals' only
// Prometheus dependency and their only writer (ADR 0034).
//
// Invariants: a global sample is computed without permission filtering (metrics are an operator channel on their
// own listener; global points are served only to callers who may describe everything); a namespace or
// configured scope's point also holds the inside-only values, computed as a caller who sees exactly the scope's
// namespaces (trust.Service.Inside), which are all a non-global caller is ever served; points older than
// SampleRetention are deleted with each write.
package sampler

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
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
	scopeSeconds    prometheus.Gauge
	scopes, skipped prometheus.Gauge
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
		scopeSeconds: obs.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_trust_trend_scope_seconds",
			Help: "Time the last round of scoped trend points took."})),
		scopes: obs.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_trust_trend_scopes",
			Help: "Scopes the last round of scoped trend points sampled."})),
		skipped: obs.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: "headwater_trust_trend_scopes_skipped",
			Help: "Scopes the last round left out past trust.MaxTrendScopes."})),
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
	StoreScopeSamples(ctx context.Context, points []map[string]any, before int64) error
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

// Run samples every interval (the service's SampleInterval) and takes a round of scoped points every
// TrendScopeInterval (the first one interval after start), each on its own loop so a long round never delays
// the gauges; 0 turns a loop off. It returns when ctx ends.
func (s *Sampler) Run(ctx context.Context) error {
	cfg := s.svc.Config()
	var wg sync.WaitGroup
	loop := func(every time.Duration, now bool, what string, f func(context.Context) error) {
		if every <= 0 {
			return
		}
		wg.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				if now {
					if err := f(ctx); err != nil && ctx.Err() == nil {
						s.metrics.failures.Inc()
						s.log.Warn(what+" failed", "err", err)
					}
				}
				now = true
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	loop(cfg.SampleInterval, true, "trust sample", s.Sample)
	loop(cfg.TrendScopeInterval, false, "scoped trend round", s.SampleScopes)
	wg.Wait()
	return nil
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

// SampleScopes takes one round of scoped trend points: every scope scopesOf lists, stored scopesPerWrite at a
// time (a round cut short keeps what it took).
func (s *Sampler) SampleScopes(ctx context.Context) error {
	began := time.Now()
	round := s.svc.Memoized() // the un-narrowed reads, shared by the criticality, producer and configured scopes
	global, err := round.Report(ctx, samplerPrincipal, trust.Query{})
	if err != nil {
		return err
	}
	scopes, skipped, err := s.scopesOf(ctx, global)
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(scopes, scopesPerWrite) {
		if err := s.sampleScope(ctx, round, global.Now, chunk...); err != nil {
			return err
		}
	}
	s.metrics.scopes.Set(float64(len(scopes)))
	s.metrics.skipped.Set(float64(skipped))
	s.metrics.scopeSeconds.Set(time.Since(began).Seconds())
	s.log.Info("scoped trend round", "scopes", len(scopes), "skipped", skipped, "seconds", time.Since(began).Seconds())
	return nil
}

// scopesPerWrite is how many scopes' points one write of a round stores.
const scopesPerWrite = 32

// SampleScope stores the points of the given scopes taken at now (a round calls it with every scope).
func (s *Sampler) SampleScope(ctx context.Context, now time.Time, scopes ...trust.TrendScope) error {
	return s.sampleScope(ctx, s.svc.Memoized(), now, scopes...)
}

func (s *Sampler) sampleScope(ctx context.Context, round *trust.Service, now time.Time, scopes ...trust.TrendScope) error {
	var points []map[string]any
	for _, sc := range scopes {
		pts, err := s.scopePoints(ctx, round, sc, now)
		if err != nil {
			return fmt.Errorf("trend scope %s: %w", sc, err)
		}
		points = append(points, pts...)
	}
	return s.store.StoreScopeSamples(ctx, points, ms(now.Add(-SampleRetention)))
}

// scopesOf lists the scopes of one round: the configured scopes, then at most trust.MaxTrendScopes each of the
// criticalities, producers and namespaces the global figures' groups (and the producers' activity) name, in
// name order; skipped counts those left out.
func (s *Sampler) scopesOf(ctx context.Context, global *trust.Report) ([]trust.TrendScope, int, error) {
	keys := map[string]map[string]bool{trust.ScopeCriticality: {}, trust.ScopeProducer: {}, trust.ScopeNamespace: {}}
	for _, sig := range trust.Signals() {
		f, err := global.Figure(ctx, sig)
		if err != nil {
			return nil, 0, err
		}
		for _, g := range f.Groups {
			if m, ok := keys[g.Dimension]; ok && g.Key != "" {
				m[g.Key] = true
			}
		}
	}
	producers, err := s.svc.ActiveProducers(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range producers {
		keys[trust.ScopeProducer][p] = true
	}
	var out []trust.TrendScope
	for _, name := range slices.Sorted(maps.Keys(s.svc.TrendScopes())) {
		out = append(out, trust.TrendScope{Kind: trust.ScopeNamed, Key: name})
	}
	skipped := 0
	for _, kind := range []string{trust.ScopeCriticality, trust.ScopeProducer, trust.ScopeNamespace} {
		ks := slices.Sorted(maps.Keys(keys[kind]))
		if len(ks) > trust.MaxTrendScopes {
			skipped += len(ks) - trust.MaxTrendScopes
			ks = ks[:trust.MaxTrendScopes]
		}
		for _, k := range ks {
			out = append(out, trust.TrendScope{Kind: kind, Key: k})
		}
	}
	return out, skipped, nil
}

// scopePoints computes one scope's points: the values for everything narrowed to it and, for a namespace or a
// configured scope, the inside-only values (trust.Service.Inside).
func (s *Sampler) scopePoints(ctx context.Context, round *trust.Service, sc trust.TrendScope, now time.Time) ([]map[string]any, error) {
	var all, inside *trust.Report
	var err error
	switch sc.Kind {
	case trust.ScopeNamed:
		inside, err = round.Inside(s.svc.TrendScopes()[sc.Key]).Report(ctx, samplerPrincipal, trust.Query{})
		all = inside
	case trust.ScopeNamespace: // both from one set of reads, kept only for this namespace
		memo := s.svc.Memoized()
		if all, err = memo.Report(ctx, samplerPrincipal, trust.Query{Namespace: sc.Key}); err == nil {
			inside, err = memo.Inside([]string{sc.Key}).Report(ctx, samplerPrincipal, trust.Query{Namespace: sc.Key})
		}
	case trust.ScopeCriticality:
		all, err = round.Report(ctx, samplerPrincipal, trust.Query{Criticality: sc.Key})
	case trust.ScopeProducer:
		all, err = round.Report(ctx, samplerPrincipal, trust.Query{Producer: sc.Key})
	}
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, sig := range trust.Signals() {
		if trust.IsProducerSignal(sig) != (sc.Kind == trust.ScopeProducer) {
			continue
		}
		f, err := all.Figure(ctx, sig)
		if err != nil {
			return nil, err
		}
		p := map[string]any{"key": sc.StoredKey() + "|" + string(sig) + "@" + itoa64(ms(now)), "scope": sc.StoredKey(),
			"signal": string(sig), "at": ms(now), "num": int64(f.Numerator), "den": int64(f.Denominator), "inNum": nil, "inDen": nil}
		if inside != nil {
			in, err := inside.Figure(ctx, sig)
			if err != nil {
				return nil, err
			}
			p["inNum"], p["inDen"] = int64(in.Numerator), int64(in.Denominator)
		}
		out = append(out, p)
	}
	return out, nil
}

func itoa64(v int64) string { return fmt.Sprint(v) }

func ms(t time.Time) int64 { return t.UnixMilli() }
