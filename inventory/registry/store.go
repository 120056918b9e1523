package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/inventory"
)

// Stored labels. The registry is their only writer; package trust reads ExpectedJob.
const (
	LabelSource      = "InventorySource"
	LabelExpectedJob = "ExpectedJob"
)

// Source is one registration as stored.
type Source struct {
	Source       string
	Kind         inventory.Kind
	Digest       string
	Jobs         int // active expected jobs
	Namespaces   []string
	RegisteredAt time.Time
	RegisteredBy string
	RetiredAt    time.Time // zero while active
}

// Result says what a registration changed.
type Result struct {
	Source    string
	Unchanged bool // the same inventory was already registered: nothing was written
	Added     int
	Updated   int
	Retired   int // jobs no longer listed
	Jobs      int
}

// Store keeps inventories in Neo4j.
type Store struct{ g *graph.Store }

// NewStore returns the Neo4j store.
func NewStore(g *graph.Store) *Store { return &Store{g: g} }

// ExpectedJobKey is the stored key of an expected job of a source.
func ExpectedJobKey(source, namespace, name string) string {
	h := sha256.Sum256([]byte(source + "\x1f" + namespace + "\x1f" + name))
	return "exp_" + hex.EncodeToString(h[:12])
}

func (s *Store) run(ctx context.Context, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.g.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database))
	if err != nil {
		return nil, err
	}
	return res.Records, nil
}

// DagSchedule is the schedule of an Airflow DAG as one active Airflow registration lists it.
type DagSchedule struct {
	Source, Namespace, Schedule string
	Paused                      bool
}

// DagSchedules reads the schedule of DAG dagID from every active Airflow registration listing it (its tasks
// "<dag_id>.<task_id>", or the DAG itself without a task listing), one row per source and namespace.
func (s *Store) DagSchedules(ctx context.Context, dagID string) ([]DagSchedule, error) {
	recs, err := s.run(ctx, `MATCH (src:`+LabelSource+` {kind: $kind}) WHERE src.retiredAt IS NULL
MATCH (e:`+LabelExpectedJob+` {source: src.key}) WHERE e.retiredAt IS NULL AND (e.name = $dag OR e.name STARTS WITH $prefix)
RETURN DISTINCT src.key AS source, e.namespace AS ns, coalesce(e.schedule, '') AS schedule, coalesce(e.paused, false) AS paused
ORDER BY source, ns`, map[string]any{"kind": string(inventory.KindAirflow), "dag": dagID, "prefix": dagID + "."})
	if err != nil {
		return nil, err
	}
	out := make([]DagSchedule, len(recs))
	for i, r := range recs {
		src, _ := r.Get("source")
		ns, _ := r.Get("ns")
		sch, _ := r.Get("schedule")
		p, _ := r.Get("paused")
		out[i] = DagSchedule{Source: src.(string), Namespace: ns.(string), Schedule: sch.(string), Paused: p == true}
	}
	return out, nil
}

// Get returns the stored registration of source (ok false when there is none).
func (s *Store) Get(ctx context.Context, source string) (Source, bool, error) {
	recs, err := s.run(ctx, `MATCH (s:`+LabelSource+` {key: $k}) RETURN properties(s) AS p`, map[string]any{"k": source})
	if err != nil || len(recs) == 0 {
		return Source{}, false, err
	}
	p, _ := recs[0].Get("p")
	return sourceOf(graph.PropsOf(p)), true, nil
}

// List returns every registration, active and retired, by source name.
func (s *Store) List(ctx context.Context) ([]Source, error) {
	recs, err := s.run(ctx, `MATCH (s:`+LabelSource+`) RETURN properties(s) AS p ORDER BY s.key`, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Source, 0, len(recs))
	for _, r := range recs {
		p, _ := r.Get("p")
		out = append(out, sourceOf(graph.PropsOf(p)))
	}
	return out, nil
}

func sourceOf(p graph.Props) Source {
	s := Source{Source: p.Str("key"), Kind: inventory.Kind(p.Str("kind")), Digest: p.Str("digest"),
		Jobs: int(p.Int("jobs")), Namespaces: p.Strs("namespaces"), RegisteredBy: p.Str("registeredBy"),
		RegisteredAt: graph.FromMillis(p.Int("registeredAt"))}
	if p.Has("retiredAt") {
		s.RetiredAt = graph.FromMillis(p.Int("retiredAt"))
	}
	return s
}

// jobRow is one expected job as written, with the hash that tells whether it changed.
func jobRow(source string, j inventory.Job) map[string]any {
	outs := make([]string, len(j.Outputs))
	for i, o := range j.Outputs {
		outs[i] = o.Namespace + "|" + o.Name
	}
	row := map[string]any{"key": ExpectedJobKey(source, j.Namespace, j.Name), "source": source,
		"namespace": j.Namespace, "name": j.Name, "type": j.Type, "matchNames": j.MatchNames,
		"dbtUniqueId": j.DbtUniqueID, "dbtMatches": j.DbtMatches, "criticality": j.Criticality, "owner": j.Owner, "schedule": j.Schedule,
		"intervalMs": j.Interval.Milliseconds(), "paused": j.Paused, "outputs": outs}
	b, _ := json.Marshal(row)
	h := sha256.Sum256(b)
	row["hash"] = hex.EncodeToString(h[:12])
	return row
}

// Register replaces the source's inventory in one transaction: new and changed jobs are written, jobs it no
// longer lists are retired (retiredAt set), and an inventory whose digest equals the active registration's
// writes nothing at all.
func (s *Store) Register(ctx context.Context, inv inventory.Inventory, by string, now time.Time) (Result, error) {
	res := Result{Source: inv.Source, Jobs: len(inv.Jobs)}
	sess := s.g.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(ctx) }()
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		res = Result{Source: inv.Source, Jobs: len(inv.Jobs)}
		return nil, s.register(ctx, tx, inv, by, graph.Millis(now), &res)
	}, neo4j.WithTxTimeout(s.g.TxTimeout()))
	return res, err
}

func (s *Store) register(ctx context.Context, tx neo4j.ManagedTransaction, inv inventory.Inventory, by string, now int64, res *Result) error {
	digest := inv.Digest()
	cur, err := collect(ctx, tx, `OPTIONAL MATCH (s:`+LabelSource+` {key: $src})
RETURN s.digest AS digest, s.retiredAt IS NULL AS active`, map[string]any{"src": inv.Source})
	if err != nil {
		return err
	}
	if d, _ := cur[0].Get("digest"); d == digest {
		if active, _ := cur[0].Get("active"); active == true {
			res.Unchanged = true
			return nil
		}
	}
	// Write-lock the source first, so two registrations of one existing source apply one after the other.
	if _, err := tx.Run(ctx, `MERGE (s:`+LabelSource+` {key: $src}) SET s.writing = true REMOVE s.writing`,
		map[string]any{"src": inv.Source}); err != nil {
		return err
	}
	existing, err := storedHashes(ctx, tx, inv.Source)
	if err != nil {
		return err
	}
	var created []map[string]any
	changed := map[string]any{}
	keys := make([]string, 0, len(inv.Jobs))
	for _, j := range inv.Jobs {
		row := jobRow(inv.Source, j)
		key := row["key"].(string)
		keys = append(keys, key)
		old, seen := existing[key]
		switch {
		case !seen:
			res.Added++
			created = append(created, row)
		case old.retired:
			res.Added++
			changed[key] = row
		case old.hash != row["hash"]:
			res.Updated++
			changed[key] = row
		}
	}
	params := map[string]any{"src": inv.Source, "created": created, "changed": changed, "keys": keys, "now": now,
		"by": by, "kind": string(inv.Kind), "digest": digest, "n": int64(len(inv.Jobs)), "nss": inv.Namespaces()}
	if err := writeJobs(ctx, tx, params); err != nil {
		return err
	}
	recs, err := collect(ctx, tx, `MATCH (e:`+LabelExpectedJob+` {source: $src})
WHERE e.retiredAt IS NULL AND NOT e.key IN $keys
SET e.retiredAt = $now
RETURN count(e) AS n`, params)
	if err != nil {
		return fmt.Errorf("retire expected jobs: %w", err)
	}
	n, _ := recs[0].Get("n")
	res.Retired = int(n.(int64))
	_, err = tx.Run(ctx, `MERGE (s:`+LabelSource+` {key: $src})
SET s.kind = $kind, s.digest = $digest, s.jobs = $n, s.namespaces = $nss, s.registeredAt = $now, s.registeredBy = $by
REMOVE s.retiredAt`, params)
	return err
}

// writeJobs creates the new expected jobs and updates the changed ones (re-activating retired ones). Both are
// found through the source (one scan of its jobs), never by a MERGE per key: without the key constraint of the
// "migration:" commit a MERGE per row would scan every expected job.
func writeJobs(ctx context.Context, tx neo4j.ManagedTransaction, params map[string]any) error {
	if _, err := tx.Run(ctx, `UNWIND $created AS r
CREATE (e:`+LabelExpectedJob+`) SET e = r, e.registeredAt = $now, e.updatedAt = $now`, params); err != nil {
		return fmt.Errorf("create expected jobs: %w", err)
	}
	if len(params["changed"].(map[string]any)) == 0 {
		return nil
	}
	if _, err := tx.Run(ctx, `MATCH (e:`+LabelExpectedJob+`) WHERE e.source = $src
WITH e, $changed[e.key] AS r WHERE r IS NOT NULL
SET e += r, e.updatedAt = $now
REMOVE e.retiredAt`, params); err != nil {
		return fmt.Errorf("update expected jobs: %w", err)
	}
	return nil
}

// stored is what a registration needs to know of a stored expected job.
type stored struct {
	hash    string
	retired bool
}

// storedHashes returns key -> hash and retirement of every stored expected job of the source.
func storedHashes(ctx context.Context, tx neo4j.ManagedTransaction, source string) (map[string]stored, error) {
	recs, err := collect(ctx, tx, `MATCH (e:`+LabelExpectedJob+`) WHERE e.source = $src
RETURN e.key AS k, e.hash AS h, e.retiredAt IS NOT NULL AS retired`, map[string]any{"src": source})
	if err != nil {
		return nil, err
	}
	out := make(map[string]stored, len(recs))
	for _, r := range recs {
		k, _ := r.Get("k")
		h, _ := r.Get("h")
		ret, _ := r.Get("retired")
		hs, _ := h.(string)
		out[k.(string)] = stored{hash: hs, retired: ret == true}
	}
	return out, nil
}

// Retire retires a registration and all its expected jobs; it reports whether an active one existed.
func (s *Store) Retire(ctx context.Context, source string, now time.Time) (bool, error) {
	recs, err := s.run(ctx, `MATCH (s:`+LabelSource+` {key: $src}) WHERE s.retiredAt IS NULL
SET s.retiredAt = $now
WITH s
OPTIONAL MATCH (e:`+LabelExpectedJob+` {source: $src}) WHERE e.retiredAt IS NULL
SET e.retiredAt = $now
RETURN count(DISTINCT s) AS n`, map[string]any{"src": source, "now": graph.Millis(now)})
	if err != nil || len(recs) == 0 {
		return false, err
	}
	n, _ := recs[0].Get("n")
	return n.(int64) > 0, nil
}

func collect(ctx context.Context, tx neo4j.ManagedTransaction, cypher string, params map[string]any) ([]*neo4j.Record, error) {
	r, err := tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	return r.Collect(ctx)
}
