package project

import (
	"context"
	"fmt"
	"sort"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/ordered"
)

// Projection version 2 (docs/adr/0019-runs-and-event-ids-scoped.md) keys runs by (runId, job) and events by
// (event id, principal). A graph written by version 1 is upgraded in place, in this order:
//
//  1. UpgradeEventKeys re-keys version-1 Event nodes (key = bare id) with the principal the raw event archive
//     recorded for the id (the first record of an id keeps the node, as version 1 projected the first delivery);
//     UpgradeQuarantined re-keys Quarantined nodes by the principal they record.
//  2. UpgradeRuns re-keys version-1 Run nodes (key = bare runId): each of their events moves to the run of its
//     own job (a runId two jobs used becomes two runs), the old node is deleted, the new runs and their jobs'
//     edges are recomputed from the events.
//  3. Replaying the archive (headwater replay, idempotent) then projects what version 1 never did: an event whose
//     id another principal had used first.
//
// Dataset, field, job and version keys do not change, nor does any history. Run public ids change form (they
// carry the job now); an id issued by version 1 still finds its run through run(id:) (a runId lookup).

// UpgradeNoteV5 is what `headwater upgrade` says of projection version 5 (ADR 0041): it adds properties only to
// what the Iceberg catalog sync reports (Field.paths and Field.pathFroms of a field renamed under its stable id;
// DatasetVersion.parentVersion, committedAt, sequenceNumber, operation and summary of a snapshot), and a graph
// written by version 4 holds none of that (version 4's decoder never set a stable field id), so there is nothing to
// rewrite in place: its keys, ids and histories are version 5's.
const UpgradeNoteV5 = "projection version 5 (ADR 0041): nothing to rewrite: fields without stable ids and versions without Iceberg snapshots are stored as version 4 stored them"

// upgradeBatch is how many version-1 runs one upgrade transaction re-keys.
const upgradeBatch = 200

// EventOwner is one archived event id with the principal that sent it.
type EventOwner struct{ ID, Principal string }

// UpgradeEventKeys re-keys the version-1 Event and Quarantined nodes named by the owners; it returns how many it
// re-keyed. Owners of ids already re-keyed (or projected by version 2) change nothing.
func (p *Projector) UpgradeEventKeys(ctx context.Context, owners []EventOwner) (int, error) {
	rows := make([]any, 0, len(owners))
	seen := map[string]bool{}
	for _, o := range owners {
		if o.Principal == "" || seen[o.ID] {
			continue
		}
		seen[o.ID] = true
		rows = append(rows, map[string]any{"id": o.ID, "key": graph.EventKey(o.Principal, o.ID), "p": o.Principal})
	}
	if len(rows) == 0 {
		return 0, nil
	}
	res, err := neo4j.ExecuteQuery(ctx, p.store.Driver, `UNWIND $rows AS row
		MATCH (e:Event {key: row.id}) WHERE e.eventId IS NULL
		SET e.key = row.key, e.eventId = row.id, e.principal = row.p
		RETURN count(e) AS n`, map[string]any{"rows": rows},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(p.store.Database))
	if err != nil {
		return 0, fmt.Errorf("upgrade event keys: %w", err)
	}
	n, _ := res.Records[0].Get("n")
	return int(asInt(n)), nil
}

// UpgradeQuarantined re-keys the version-1 Quarantined nodes whose key starts with keyPrefix ("" for all) by the
// principal each records, and returns how many it re-keyed.
func (p *Projector) UpgradeQuarantined(ctx context.Context, keyPrefix string) (int, error) {
	res, err := neo4j.ExecuteQuery(ctx, p.store.Driver, `MATCH (q:Quarantined)
		WHERE q.eventId IS NULL AND q.principal IS NOT NULL AND q.principal <> '' AND q.key STARTS WITH $p
		SET q.eventId = q.key, q.key = q.key + $sep + q.principal
		RETURN count(q) AS n`, map[string]any{"p": keyPrefix, "sep": graph.EventKeySep},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(p.store.Database))
	if err != nil {
		return 0, fmt.Errorf("upgrade quarantined: %w", err)
	}
	n, _ := res.Records[0].Get("n")
	return int(asInt(n)), nil
}

// UpgradeRuns re-keys every version-1 run of the jobs whose namespace starts with jobNamespacePrefix ("" for
// all) and the placeholder parents those runs name, upgradeBatch runs per transaction, and returns how many it
// re-keyed.
func (p *Projector) UpgradeRuns(ctx context.Context, jobNamespacePrefix string) (int, error) {
	total := 0
	for {
		var n int
		err := p.upgradeTx(ctx, func(w *txWriter) (err error) {
			n, err = w.upgradeRuns(jobNamespacePrefix)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("upgrade runs: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// upgradeRuns re-keys one batch of version-1 runs.
func (w *txWriter) upgradeRuns(prefix string) (int, error) {
	// A placeholder parent (no state, no events) names a job that may have no node, so a prefix cannot find it by
	// its job: it goes with the batch of a run that names it as parent.
	out, err := w.run(`MATCH (r:Run) WHERE r.runId IS NULL AND NOT r.key CONTAINS $sep
		OPTIONAL MATCH (j:Job {key: r.jobKey})
		WITH r, j WHERE $p = '' OR j.namespace STARTS WITH $p
		WITH r LIMIT $n
		OPTIONAL MATCH (r)-[:CHILD_OF]->(ph:Run) WHERE ph.runId IS NULL AND NOT ph.key CONTAINS $sep AND ph.state IS NULL
		WITH collect(r) + collect(ph) AS rs
		UNWIND rs AS r
		WITH DISTINCT r
		OPTIONAL MATCH (e:Event {runKey: r.key})
		RETURN r.key AS run, r.jobKey AS job, r.state IS NOT NULL AS stated,
			collect(CASE WHEN e IS NULL THEN null ELSE [e.key, e.payload] END) AS evs`,
		map[string]any{"sep": graph.RunKeySep, "p": prefix, "n": upgradeBatch})
	if err != nil || len(out) == 0 {
		return 0, err
	}
	old, moves, renames, runs := make([]any, 0, len(out)), []any{}, []any{}, map[string]bool{}
	for _, row := range out {
		run, _ := row.Get("run")
		job, _ := row.Get("job")
		stated, _ := row.Get("stated")
		w.touch(asStr(run), asStr(job))
		evs, _ := row.Get("evs")
		if len(evs.([]any)) == 0 && stated == true && asStr(job) != "" {
			// a run with state but no events (written by the history loader): re-keyed as it is
			renames = append(renames, map[string]any{"key": run, "new": graph.RunKey(asStr(run), asStr(job))})
			continue
		}
		old = append(old, run) // re-created from its events; a placeholder without events just goes
		for _, x := range evs.([]any) {
			pair := x.([]any)
			r, err := decodeRec(pair[1])
			if err != nil {
				return 0, err
			}
			k := r.runKey()
			moves = append(moves, map[string]any{"key": pair[0], "run": k, "id": r.ID, "link": r.PubRunID == ""})
			if r.PubRunID == "" {
				runs[k] = true
			}
		}
	}
	if _, err := w.runAs("upgradeRuns:move", `UNWIND $moves AS m
		MATCH (e:Event {key: m.key})
		SET e.runKey = m.run, e.eventId = coalesce(e.eventId, m.id)
		WITH e, m
		OPTIONAL MATCH (e)-[o:OF_RUN]->()
		DELETE o
		WITH DISTINCT e, m
		FOREACH (_ IN CASE WHEN m.link THEN [1] ELSE [] END |
			MERGE (r:Run {key: m.run})
			MERGE (e)-[:OF_RUN]->(r))`, map[string]any{"moves": moves}); err != nil {
		return 0, err
	}
	if _, err := w.runAs("upgradeRuns:delete", `UNWIND $old AS k MATCH (r:Run {key: k}) DETACH DELETE r`,
		map[string]any{"old": old}); err != nil {
		return 0, err
	}
	if _, err := w.runAs("upgradeRuns:rename", `UNWIND $rows AS row MATCH (r:Run {key: row.key})
		SET r.runId = r.key, r.key = row.new`, map[string]any{"rows": renames}); err != nil {
		return 0, err
	}
	keys := ordered.Keys(runs)
	sort.Strings(keys)
	folded, err := w.refoldRuns(keys, nil)
	if err != nil {
		return 0, err
	}
	plan := jobPlan{runs: folded.states}
	plan.merge(folded.jobs)
	plan.allFull() // the old runs mixed jobs: fold every affected job from all its runs
	return len(old) + len(renames), w.projectJobEdges(plan)
}

// upgradeTx runs one write transaction of an in-place upgrade step and, once it commits, bumps the cache generations
// of what it touched (UpgradeRuns, UpgradeDbtJobs, UpgradeIdentities, UpgradeEvidence, UpgradeScans; the steps over
// the dataset fold state use inFoldedUpgrade).
func (p *Projector) upgradeTx(ctx context.Context, body func(w *txWriter) error) error {
	var touched []string
	sess := p.store.Session(ctx, neo4j.AccessModeWrite)
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		w := &txWriter{ctx: ctx, tx: tx, token: newToken(), touched: map[string]bool{}}
		err := body(w)
		touched = ordered.Keys(w.touched)
		return nil, err
	}, neo4j.WithTxTimeout(p.store.TxTimeout()))
	_ = sess.Close(context.Background())
	if err != nil {
		return err
	}
	if len(touched) > 0 {
		if err := p.gens.Bump(ctx, touched); err != nil {
			return fmt.Errorf("%w: %w", ErrGenerationBump, err)
		}
	}
	return nil
}
