package gateway

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiters holds one token bucket per producer principal, so one runaway producer cannot starve the others.
type limiters struct {
	mu    sync.Mutex
	rps   float64
	burst int
	now   func() time.Time
	byKey map[string]*rate.Limiter
}

func newLimiters(rps float64, burst int, now func() time.Time) *limiters {
	return &limiters{rps: rps, burst: burst, now: now, byKey: map[string]*rate.Limiter{}}
}

// take reserves n events for the principal; when over the rate it reserves nothing and says how long to wait.
func (l *limiters) take(principal string, n int) (time.Duration, bool) {
	if l.rps <= 0 {
		return 0, true
	}
	l.mu.Lock()
	lim, ok := l.byKey[principal]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(l.rps), l.burst)
		l.byKey[principal] = lim
	}
	l.mu.Unlock()
	if n > l.burst {
		return time.Second, false
	}
	now := l.now()
	r := lim.ReserveN(now, n)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}
