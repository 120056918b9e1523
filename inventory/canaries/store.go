package canaries

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// Store keeps canaries in Neo4j.
type Store struct{ g *graph.Store }

// NewStore returns the Neo4j store.
func NewStore(g *graph.Store) *Store { return &Store{g: g} }

func (s *Store) run(ctx context.Context, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.g.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database))
	if err != nil {
		return nil, err
	}
	return res.Records, nil
}

// Label is the label of stored canaries.
const Label = "Canary"

const canaryProps = `c{.key, .fromNs, .fromName, .fromField, .toNs, .toName, .toField, .jobNs, .jobName,
  .transformation, .registeredAt, .registeredBy, .retiredAt, .checkedAt, .ok, .failingSince, .failure, .checks, .passes}`

// Put creates or replaces a canary's registration (its check history restarts).
func (s *Store) Put(ctx context.Context, c Canary) error {
	_, err := s.run(ctx, `MERGE (c:`+Label+` {key: $name})
SET c.fromNs = $fromNs, c.fromName = $fromName, c.fromField = $fromField, c.toNs = $toNs, c.toName = $toName,
  c.toField = $toField, c.jobNs = $jobNs, c.jobName = $jobName, c.transformation = $tr, c.registeredAt = $at,
  c.registeredBy = $by, c.retiredAt = null, c.checkedAt = null, c.ok = null, c.failingSince = null, c.failure = null,
  c.checks = 0, c.passes = 0`, map[string]any{"name": c.Name, "fromNs": c.From.Namespace, "fromName": c.From.Name,
		"fromField": c.From.Field, "toNs": c.To.Namespace, "toName": c.To.Name, "toField": c.To.Field,
		"jobNs": c.JobNamespace, "jobName": c.JobName, "tr": c.Transformation, "at": graph.Millis(c.RegisteredAt),
		"by": c.RegisteredBy})
	return err
}

// Retire sets a canary's retiredAt.
func (s *Store) Retire(ctx context.Context, name string, now time.Time) error {
	_, err := s.run(ctx, `MATCH (c:`+Label+` {key: $name}) SET c.retiredAt = $now`,
		map[string]any{"name": name, "now": graph.Millis(now)})
	return err
}

// Get reads one canary.
func (s *Store) Get(ctx context.Context, name string) (Canary, bool, error) {
	recs, err := s.run(ctx, `MATCH (c:`+Label+` {key: $name}) RETURN `+canaryProps+` AS c`, map[string]any{"name": name})
	if err != nil || len(recs) == 0 {
		return Canary{}, false, err
	}
	return canaryOf(recs[0]), true, nil
}

// All reads every canary, by name.
func (s *Store) All(ctx context.Context) ([]Canary, error) { return s.canaries(ctx, false) }

// Active reads the canaries not retired, by name.
func (s *Store) Active(ctx context.Context) ([]Canary, error) { return s.canaries(ctx, true) }

func (s *Store) canaries(ctx context.Context, active bool) ([]Canary, error) {
	recs, err := s.run(ctx, `MATCH (c:`+Label+`) WHERE NOT $active OR c.retiredAt IS NULL
RETURN `+canaryProps+` AS c ORDER BY c.key`, map[string]any{"active": active})
	if err != nil {
		return nil, err
	}
	out := make([]Canary, len(recs))
	for i, r := range recs {
		out[i] = canaryOf(r)
	}
	return out, nil
}

// SetCheck records one check's outcome: ok, or the failure (failingSince kept from the first failed check
// of a run of failures).
func (s *Store) SetCheck(ctx context.Context, name string, at time.Time, ok bool, failure string) error {
	_, err := s.run(ctx, `MATCH (c:`+Label+` {key: $name}) WHERE c.retiredAt IS NULL
SET c.failingSince = CASE WHEN $ok THEN null ELSE coalesce(c.failingSince, $at) END,
  c.checkedAt = $at, c.ok = $ok, c.failure = CASE WHEN $ok THEN null ELSE $failure END,
  c.checks = coalesce(c.checks, 0) + 1, c.passes = coalesce(c.passes, 0) + CASE WHEN $ok THEN 1 ELSE 0 END`,
		map[string]any{"name": name, "at": graph.Millis(at), "ok": ok, "failure": failure})
	return err
}

func canaryOf(r interface{ Get(string) (any, bool) }) Canary {
	v, _ := r.Get("c")
	p := graph.Props(v.(map[string]any))
	return Canary{Name: p.Str("key"), From: End{p.Str("fromNs"), p.Str("fromName"), p.Str("fromField")},
		To: End{p.Str("toNs"), p.Str("toName"), p.Str("toField")}, JobNamespace: p.Str("jobNs"),
		JobName: p.Str("jobName"), Transformation: p.Str("transformation"), RegisteredAt: ms(p.Int("registeredAt")),
		RegisteredBy: p.Str("registeredBy"), RetiredAt: ms(p.Int("retiredAt")), CheckedAt: ms(p.Int("checkedAt")),
		OK: p.Bool("ok"), FailingSince: ms(p.Int("failingSince")), Failure: p.Str("failure"), Checks: p.Int("checks"),
		Passes: p.Int("passes")}
}

func ms(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
