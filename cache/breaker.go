package cache

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// BreakerCooldown is how long the cache stays off after a Redis error, so a dead Redis costs one failed call
// per cooldown instead of one per lookup (with the client's dial retries, that is seconds per request).
const BreakerCooldown = 5 * time.Second

// breaker turns the cache off for a cooldown after an error.
type breaker struct {
	now       func() time.Time
	cooldown  time.Duration
	openUntil atomic.Int64 // unix nanos
}

func (b *breaker) trip() { b.openUntil.Store(b.now().Add(b.cooldown).UnixNano()) }

func (b *breaker) open() bool { return b.now().UnixNano() < b.openUntil.Load() }

// unreachable says whether err means Redis cannot be reached at all (as opposed to one slow operation).
func unreachable(err error) bool {
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return true
	case errors.As(err, &op) && op.Op == "dial":
		return true
	}
	return false
}
