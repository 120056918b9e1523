package history

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"golang.org/x/sync/errgroup"

	"github.com/headwater-data/headwater/graph"
)

// stmt is one statement with its rows; a batch is the statements of one transaction, run in order.
type stmt struct {
	cypher string
	rows   []map[string]any
}

type batch []stmt

func (b batch) size() int {
	n := 0
	for _, s := range b {
		n += len(s.rows)
	}
	return n
}

// PhaseResult is what one phase wrote.
type PhaseResult struct {
	Name       string        `json:"name"`
	Rows       int64         `json:"rows"` // nodes + relationships created, from Neo4j's counters
	Batches    int64         `json:"batches"`
	Elapsed    time.Duration `json:"elapsedNs"`
	RowsPerSec float64       `json:"rowsPerSec"`
}

// producer emits the batches of a phase; it must stop when emit returns an error.
type producer func(emit func(batch) error) error

// lanedProducer emits batches to a lane: batches of one lane go to one writer, so batches that would contend
// for the same node (a hub) never run concurrently. Lane -1 means any writer.
type lanedProducer func(emit func(lane int, b batch) error) error

// anyLane adapts a producer whose batches may go to any writer.
func anyLane(p producer) lanedProducer {
	return func(emit func(int, batch) error) error {
		return p(func(b batch) error { return emit(-1, b) })
	}
}

// runPhase streams a phase's batches to parallel writers, one channel per writer.
func (l *Loader) runPhase(ctx context.Context, name string, produce lanedProducer) (PhaseResult, error) {
	start := l.now()
	w := l.cfg.Writers
	chans := make([]chan batch, w)
	for i := range chans {
		chans[i] = make(chan batch, 2)
	}
	g, gctx := errgroup.WithContext(ctx)
	var rows, batches atomic.Int64
	g.Go(func() error {
		defer func() {
			for _, ch := range chans {
				close(ch)
			}
		}()
		next := 0
		return produce(func(lane int, b batch) error {
			if lane < 0 {
				lane, next = next, next+1
			}
			select {
			case chans[lane%w] <- b:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		})
	})
	for _, ch := range chans {
		g.Go(func() error {
			for b := range ch {
				n, err := l.write(gctx, b)
				if err != nil {
					return fmt.Errorf("phase %s: %w", name, err)
				}
				rows.Add(n)
				batches.Add(1)
			}
			return nil
		})
	}
	err := g.Wait()
	res := PhaseResult{Name: name, Rows: rows.Load(), Batches: batches.Load(), Elapsed: l.now().Sub(start)}
	if s := res.Elapsed.Seconds(); s > 0 {
		res.RowsPerSec = float64(res.Rows) / s
	}
	l.log.Info("history phase done", "phase", name, "rows", res.Rows, "batches", res.Batches,
		"elapsed", res.Elapsed.Round(time.Millisecond), "rowsPerSec", int64(res.RowsPerSec))
	return res, err
}

// write runs one batch in one write transaction (retried by the driver on transient errors such as
// deadlocks) and returns the nodes and relationships it created.
func (l *Loader) write(ctx context.Context, b batch) (int64, error) {
	sess := l.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		var n int64
		for _, s := range b {
			res, err := tx.Run(ctx, s.cypher, map[string]any{"rows": s.rows, "open": graph.OpenEnd, "nv": NormVersion})
			if err != nil {
				return nil, err
			}
			sum, err := res.Consume(ctx)
			if err != nil {
				return nil, err
			}
			c := sum.Counters()
			n += int64(c.NodesCreated() + c.RelationshipsCreated())
		}
		return n, nil
	}, neo4j.WithTxTimeout(txTimeout))
	if err != nil {
		return 0, fmt.Errorf("write batch of %d rows: %w", b.size(), err)
	}
	return out.(int64), nil
}

const txTimeout = 5 * time.Minute

// chunker cuts a row stream into batches of one statement.
type chunker struct {
	cypher string
	limit  int
	rows   []map[string]any
	emit   func(batch) error
	sortBy string // key to sort rows by before emitting ("" keeps order)
}

func (c *chunker) add(row map[string]any) error {
	c.rows = append(c.rows, row)
	if len(c.rows) >= c.limit {
		return c.flush()
	}
	return nil
}

func (c *chunker) flush() error {
	if len(c.rows) == 0 {
		return nil
	}
	sortRows(c.rows, c.sortBy)
	b := batch{{cypher: c.cypher, rows: c.rows}}
	c.rows = nil
	return c.emit(b)
}
