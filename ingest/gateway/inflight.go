package gateway

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/internal/httpbody"
)

// inFlight bounds the request bytes the gateway holds at once: bodies being read, decoded, or waiting for Kafka's
// acknowledgement (Config.MaxInFlightBytes). A request that does not fit is shed at once with 503 and Retry-After
// instead of queueing in memory: under overload the heap stays flat and producers back off (ADR 0048).
type inFlight struct {
	mu    sync.Mutex
	max   int64
	used  int64
	gauge prometheus.Gauge
}

func newInFlight(maxBytes int64, gauge prometheus.Gauge) *inFlight {
	return &inFlight{max: maxBytes, gauge: gauge}
}

// reservation is one request's share of the budget; release returns it (safe to call once more than needed).
type reservation struct {
	f *inFlight
	n int64
}

// acquire reserves n bytes, or nothing and false when they do not fit.
func (f *inFlight) acquire(n int64) (*reservation, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+n > f.max {
		return nil, false
	}
	f.used += n
	f.gauge.Set(float64(f.used))
	return &reservation{f: f, n: n}, true
}

// shrink gives back what the request reserved beyond n bytes (its body turned out smaller than reserved).
func (r *reservation) shrink(n int64) {
	if n >= r.n {
		return
	}
	r.f.mu.Lock()
	r.f.used -= r.n - n
	r.f.gauge.Set(float64(r.f.used))
	r.f.mu.Unlock()
	r.n = n
}

func (r *reservation) release() { r.shrink(0) }

// reserveFor is what a request reserves before its body is read: its Content-Length when it declares one and is
// not compressed, else the most its body may decompress to.
func reserveFor(r *http.Request, maxBody int64) int64 {
	gz, _ := contentEncoding(r.Header.Values("Content-Encoding"))
	if !gz && r.ContentLength > 0 && r.ContentLength < maxBody {
		return r.ContentLength
	}
	return maxBody
}

// admit reserves the request's bytes or answers 503 with Retry-After (rule overloaded) and returns false.
func (g *Gateway) admit(w http.ResponseWriter, r *http.Request) (*reservation, bool) {
	res, ok := g.inflight.acquire(reserveFor(r, g.cfg.MaxBodyBytes))
	if ok {
		return res, true
	}
	g.m.shed.Inc()
	httpbody.LeaveUnread(w)
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfterOverloaded.Seconds())))
	writeJSON(w, http.StatusServiceUnavailable, ErrorBody{Field: "", Rule: ruleOverloaded,
		Message: "the gateway holds " + strconv.FormatInt(g.cfg.MaxInFlightBytes, 10) +
			" request bytes at once and has no room for this request; nothing was accepted; retry after the given delay"})
	return nil, false
}
