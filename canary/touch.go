package canary

import (
	"context"
	"sync/atomic"
)

// Bumper is the projector's generation bumper (project.GenerationBumper).
type Bumper interface {
	Bump(ctx context.Context, keys []string) error
}

// TouchHook is a generation bumper that also hands the touched node keys to a listener (Checker.Touched). The
// projector bumps after each committed transaction, so the checker hears of every batch's writes without a hook
// in the consumer (ADR 0034); the listener must not block.
type TouchHook struct {
	next   Bumper
	listen atomic.Pointer[func(keys []string)]
}

// NewTouchHook wraps the projector's bumper.
func NewTouchHook(next Bumper) *TouchHook { return &TouchHook{next: next} }

// Bump bumps the generations, then tells the listener (whether or not the bump reached Redis: the graph is
// committed either way).
func (t *TouchHook) Bump(ctx context.Context, keys []string) error {
	err := t.next.Bump(ctx, keys)
	if fn := t.listen.Load(); fn != nil {
		(*fn)(keys)
	}
	return err
}

// Listen sets the listener.
func (t *TouchHook) Listen(fn func(keys []string)) { t.listen.Store(&fn) }
