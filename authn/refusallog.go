package authn

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLogPerSecond bounds the INFO lines about refused tokens one middleware writes per second; the lines over
// it are counted and the count is reported ("suppressed") on the next line written. The refusals themselves are
// all counted in headwater_authn_requests_total.
const refusalLogPerSecond = 10

// sampledLog writes at most refusalLogPerSecond lines per second of its clock.
type sampledLog struct {
	log   *slog.Logger
	clock func() time.Time

	mu         sync.Mutex
	window     time.Time // start of the current one-second window
	lines      int       // lines written in the window
	suppressed int       // lines dropped since the last line written
}

func newSampledLog(log *slog.Logger, clock func() time.Time) *sampledLog {
	return &sampledLog{log: log, clock: clock}
}

// info writes the line unless the window's budget is spent.
func (s *sampledLog) info(msg string, args ...any) {
	n, ok := s.take()
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	s.log.Info(msg, args...)
}

// take spends one line of the window's budget and returns how many lines were suppressed before it.
func (s *sampledLog) take() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.clock(); now.Sub(s.window) >= time.Second || now.Before(s.window) {
		s.window, s.lines = now, 0
	}
	if s.lines >= refusalLogPerSecond {
		s.suppressed++
		return 0, false
	}
	s.lines++
	n := s.suppressed
	s.suppressed = 0
	return n, true
}
