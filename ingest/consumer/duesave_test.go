package consumer

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/project"
)

// dueCounter is a projector that counts its due saves.
type dueCounter struct{ n atomic.Int64 }

func (*dueCounter) Apply(context.Context, []project.Envelope) (project.Result, error) {
	return project.Result{}, nil
}
func (d *dueCounter) SaveDue(context.Context) error { d.n.Add(1); return nil }

// A session's due-save timer calls the projector's SaveDue while the session lasts, and none after its end
// (stopDue waits for it), so a session-end save never runs beside a due save.
func TestDueSavesRunDuringTheSessionAndStopAtItsEnd(t *testing.T) {
	p := &dueCounter{}
	h := &handler{d: Deps{Projector: p, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, dueEvery: 10 * time.Millisecond}
	h.startDueSaves(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for p.n.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.n.Load() < 2 {
		t.Fatalf("the due-save timer called SaveDue %d times in 10 s", p.n.Load())
	}
	h.stopDue()
	n := p.n.Load()
	time.Sleep(50 * time.Millisecond)
	if m := p.n.Load(); m != n {
		t.Fatalf("SaveDue ran after the session ended (%d calls, then %d)", n, m)
	}
}
