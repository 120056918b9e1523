package compare

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// NaiveCypher is the one variable-length path query a competent user writes against the documented model
// (docs/graph-model.md) for a dataset-level walk: every path of up to 2*depth relationships through
// INPUT_TO/OUTPUT_TO (a dataset-to-dataset step is two relationships through the job) and DECLARED_FEEDS,
// ending at a dataset, kept when every relationship on it has an interval in force at $t that is PUBLISHED
// and it makes at most $depth dataset steps; the paths are then cut into distinct dataset steps
// [near key, far key, job key ("" for declared)]. The root's own key comes back even when nothing matches.
// Variable-length bounds cannot be parameters, so the depth is part of the text.
func NaiveCypher(down bool, depth int) string {
	pattern, leg := `(root)-[:INPUT_TO|OUTPUT_TO|DECLARED_FEEDS*1..%d]->(:Dataset)`, graph.RelOutputTo
	if !down {
		pattern, leg = `(root)<-[:INPUT_TO|OUTPUT_TO|DECLARED_FEEDS*1..%d]-(:Dataset)`, graph.RelInputTo
	}
	return `MATCH (root:Dataset {namespace: $ns, name: $name})
OPTIONAL MATCH p = ` + fmt.Sprintf(pattern, 2*depth) + `
WHERE all(r IN relationships(p) WHERE any(i IN range(0, size(r.froms) - 1)
        WHERE r.froms[i] <= $t AND $t < r.tos[i] AND r.pubs[i] = 'PUBLISHED'))
  AND size([r IN relationships(p) WHERE type(r) <> '` + leg + `']) <= $depth
WITH root, nodes(p) AS ns, relationships(p) AS rs
UNWIND CASE WHEN rs IS NULL THEN [null] ELSE
  [i IN range(0, size(rs) - 1) WHERE type(rs[i]) <> '` + leg + `' |
    CASE type(rs[i]) WHEN 'DECLARED_FEEDS' THEN [ns[i].key, ns[i + 1].key, '']
    ELSE [ns[i].key, ns[i + 2].key, ns[i + 1].key] END] END AS step
RETURN root.key AS root, collect(DISTINCT step) AS steps`
}

// Naive runs NaiveCypher against Neo4j.
type Naive struct {
	Driver   neo4j.DriverWithContext
	Database string
	Timeout  time.Duration // per query; the server-side transaction timeout too, so a slow query is killed
}

// ErrTimeout marks a naive query stopped by its timeout.
var ErrTimeout = errors.New("naive query timed out")

// ErrMemoryLimit marks a naive query stopped by Neo4j's transaction or pool memory limit: it cannot answer.
var ErrMemoryLimit = errors.New("naive query hit the Neo4j memory limit")

// ErrNoRoot reports a root dataset that is not in the graph.
var ErrNoRoot = errors.New("root dataset not found")

// graceTimeout lets the server-side transaction timeout fire before the client gives up.
const graceTimeout = 2 * time.Second

// Answer runs the naive query for one root and returns its answer.
func (n *Naive) Answer(ctx context.Context, root Root, down bool, depth int, asOf int64) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, n.Timeout+graceTimeout)
	defer cancel()
	res, err := neo4j.ExecuteQuery(ctx, n.Driver, NaiveCypher(down, depth),
		map[string]any{"ns": root.Namespace, "name": root.Name, "t": asOf, "depth": depth},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(n.Database), neo4j.ExecuteQueryWithReadersRouting(),
		neo4j.ExecuteQueryWithTransactionConfig(neo4j.WithTxTimeout(n.Timeout)))
	if err != nil {
		if timedOut(ctx, err) {
			return Answer{}, fmt.Errorf("%w after %s: %w", ErrTimeout, n.Timeout, err)
		}
		if outOfMemory(err) {
			return Answer{}, fmt.Errorf("%w: %w", ErrMemoryLimit, err)
		}
		return Answer{}, fmt.Errorf("naive query: %w", err)
	}
	if len(res.Records) == 0 {
		return Answer{}, fmt.Errorf("%w: %s %s", ErrNoRoot, root.Namespace, root.Name)
	}
	return naiveAnswer(res.Records[0].AsMap(), down)
}

// naiveAnswer turns the record into an answer: the root, every step's far end, every step as an edge in
// data-flow direction.
func naiveAnswer(rec map[string]any, down bool) (Answer, error) {
	a := NewAnswer()
	rootKey, _ := rec["root"].(string)
	a.Nodes[rootKey] = true
	steps, _ := rec["steps"].([]any)
	for _, s := range steps {
		st, ok := s.([]any)
		if !ok || len(st) != 3 {
			return Answer{}, fmt.Errorf("naive query: unexpected step %v", s)
		}
		near, _ := st[0].(string)
		far, _ := st[1].(string)
		job, _ := st[2].(string)
		a.Nodes[far] = true
		if down {
			a.Edges[Edge{From: near, To: far, Job: job}] = true
		} else {
			a.Edges[Edge{From: far, To: near, Job: job}] = true
		}
	}
	return a, nil
}

func timedOut(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && (strings.Contains(ne.Code, "TransactionTimedOut") || strings.Contains(ne.Code, "Terminated"))
}

func outOfMemory(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && strings.Contains(ne.Code, "Memory")
}
