package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/ingest/project"
)

// flakyApplier fails its first n calls with err, then succeeds.
type flakyApplier struct {
	n     int
	err   error
	calls int
}

func (f *flakyApplier) Apply(context.Context, []project.Envelope) (project.Result, error) {
	f.calls++
	if f.calls <= f.n {
		return project.Result{}, f.err
	}
	return project.Result{}, nil
}

// TestReplayAppliesABatchAgainAfterContention: a batch that times out on a loaded Neo4j is applied again after a
// doubling back-off (events are claimed by id, so that is safe); any other error ends the replay at once; and
// contention that does not end stops after replayAttempts with an error that says what to change.
func TestReplayAppliesABatchAgainAfterContention(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	batch := []project.Envelope{{}}
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	timeout := &neo4j.Neo4jError{Code: "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"}

	f := &flakyApplier{n: 2, err: timeout}
	if err := applyWithRetry(t.Context(), f, batch, log, sleep); err != nil || f.calls != 3 {
		t.Fatalf("two timeouts then success: err %v after %d calls", err, f.calls)
	}
	if len(waits) != 2 || waits[0] != time.Second || waits[1] != 2*time.Second {
		t.Errorf("back-off: %v", waits)
	}

	other := errors.New("the graph refused it")
	f = &flakyApplier{n: 1, err: other}
	if err := applyWithRetry(t.Context(), f, batch, log, sleep); !errors.Is(err, other) || f.calls != 1 {
		t.Errorf("a non-contention error: %v after %d calls", err, f.calls)
	}

	waits = nil
	f = &flakyApplier{n: 100, err: timeout}
	err := applyWithRetry(t.Context(), f, batch, log, sleep)
	if err == nil || f.calls != replayAttempts || !strings.Contains(err.Error(), "--neo4j-query-timeout") {
		t.Errorf("endless contention: %v after %d calls", err, f.calls)
	}
	if waits[len(waits)-1] > replayMaxBackoff {
		t.Errorf("back-off beyond its cap: %v", waits)
	}
}
