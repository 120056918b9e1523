package authn

import "github.com/prometheus/client_golang/prometheus"

// Metrics are authentication's Prometheus instruments.
type Metrics struct {
	requests *prometheus.CounterVec
}

// Results counted by headwater_authn_requests_total.
const (
	resultOK          = "ok"
	resultRestricted  = "restricted"
	resultMissing     = "missing"
	resultInvalid     = "invalid"
	resultUnavailable = "unavailable"
)

// NewMetrics registers the authentication metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "headwater_authn_requests_total",
		Help: "Authenticated requests by method (api-token, jwt, dev-no-auth, none) and result."}, []string{"method", "result"})}
	reg.MustRegister(m.requests)
	return m
}

func (m *Metrics) observe(method, result string) {
	if m != nil {
		m.requests.WithLabelValues(method, result).Inc()
	}
}

// WithMetrics makes the authenticator count outcomes on m; it returns a for chaining.
func (a *Authenticator) WithMetrics(m *Metrics) *Authenticator {
	a.metrics = m
	return a
}
