package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// gateSink blocks every write until released, then records it; it fails the first failures writes.
type gateSink struct {
	mu       sync.Mutex
	release  chan struct{}
	failures int
	recs     []AuditRecord
}

func (g *gateSink) Audit(ctx context.Context, r AuditRecord) error {
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failures > 0 {
		g.failures--
		return errors.New("sink down")
	}
	g.recs = append(g.recs, r)
	return nil
}

func (g *gateSink) written() []AuditRecord {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]AuditRecord(nil), g.recs...)
}

// TestAsyncAuditorQueueFull: with the sink stuck, Audit returns at once while the queue has room, waits the
// enqueue wait and refuses with ErrAuditQueueFull when it is full; once the sink moves every queued record is
// written in order, the failed attempts retried, none skipped.
func TestAsyncAuditorQueueFull(t *testing.T) {
	sink := &gateSink{release: make(chan struct{}), failures: 2}
	a := NewAsyncAuditor(sink, AsyncOptions{Queue: 2, EnqueueWait: 50 * time.Millisecond})
	ctx := t.Context()
	// one record is taken by the writer (blocked in the sink), two fill the queue
	for i := range 3 {
		t0 := time.Now()
		if err := a.Audit(ctx, AuditRecord{Principal: fmt.Sprint(i)}); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if d := time.Since(t0); d > 20*time.Millisecond {
			t.Errorf("record %d waited %s with room in the queue", i, d)
		}
		time.Sleep(5 * time.Millisecond) // let the writer take the first
	}
	t0 := time.Now()
	if err := a.Audit(ctx, AuditRecord{Principal: "over"}); !errors.Is(err, ErrAuditQueueFull) {
		t.Fatalf("full queue: %v, want ErrAuditQueueFull", err)
	}
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Errorf("a full queue refused after %s, before the enqueue wait", d)
	}
	close(sink.release)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if lost, err := a.Close(cctx); err != nil || lost != 0 {
		t.Fatalf("close: %d lost, %v", lost, err)
	}
	got := sink.written()
	if len(got) != 3 || got[0].Principal != "0" || got[1].Principal != "1" || got[2].Principal != "2" {
		t.Fatalf("written %+v, want records 0, 1, 2 in order", got)
	}
	if err := a.Audit(ctx, AuditRecord{}); !errors.Is(err, ErrAuditClosed) {
		t.Errorf("after close: %v, want ErrAuditClosed", err)
	}
}
