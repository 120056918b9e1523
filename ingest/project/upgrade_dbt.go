package project

import (
	"context"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/internal/ordered"
)

// UpgradeDbtJobs moves the already-projected events of dbt node jobs onto the job projection version 3 keys them
// by (docs/adr/0027-dbt-job-identity.md). Replay cannot do it: it skips events already projected, and an earlier
// version stored them under the job of their name. envs are archived events (re-decoded, with the owned set
// they were accepted with); those whose job is a dbt node job under today's rules and whose stored event still
// names another job get their stored job rewritten, their runs (keys unchanged: a run keeps the name it was
// reported under) re-folded onto the dbt node job, the jobs' edges folded from all their runs, and a job left with
// no run and no JobEvent deleted. Only jobs whose (canonical) namespace starts with jobNamespacePrefix ("" for
// all) move. Idempotent: an event already on its dbt node job changes nothing. It returns how many events it moved.
func (p *Projector) UpgradeDbtJobs(ctx context.Context, envs []Envelope, jobNamespacePrefix string) (int, error) {
	want := map[string]*jobRec{}
	for _, env := range envs {
		r, err := buildRec(env, p.canon)
		if err != nil || r.Job == nil || r.Job.DbtRole == "" || !strings.HasPrefix(r.Job.NS, jobNamespacePrefix) {
			continue // unprojectable events were quarantined; other jobs do not change
		}
		want[r.key()] = r.Job
	}
	if len(want) == 0 {
		return 0, nil
	}
	var n int
	err := p.upgradeTx(ctx, func(w *txWriter) (err error) {
		n, err = w.upgradeDbtJobs(want)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("upgrade dbt jobs: %w", err)
	}
	return n, nil
}

// upgradeDbtJobs rewrites the stored events of want (event key -> its job under today's rules) and re-projects
// their runs and jobs.
func (w *txWriter) upgradeDbtJobs(want map[string]*jobRec) (int, error) {
	out, err := w.runAs("upgradeDbtJobs:read", `UNWIND $keys AS k MATCH (e:Event {key: k})
		RETURN e.key AS k, e.payload AS p`, map[string]any{"keys": toAny(ordered.Keys(want))})
	if err != nil {
		return 0, err
	}
	var moved []*rec
	var rows []any
	oldJobs := map[string]bool{}
	for _, row := range out {
		k, _ := row.Get("k")
		p, _ := row.Get("p")
		r, err := decodeRec(p)
		if err != nil {
			return 0, err
		}
		j := want[asStr(k)]
		if r.Job == nil || r.Job.Key == j.Key {
			continue
		}
		oldJobs[r.Job.Key] = true
		r.Job.Key, r.Job.NameKey, r.Job.DbtUniqueID, r.Job.DbtRole = j.Key, j.NameKey, j.DbtUniqueID, j.DbtRole
		payload, err := encodePayload(r)
		if err != nil {
			return 0, err
		}
		about := ""
		if r.Kind == "JOB" {
			about = r.Job.Key
		}
		rows = append(rows, map[string]any{"key": r.key(), "payload": payload, "about": about})
		moved = append(moved, r)
	}
	if len(moved) == 0 {
		return 0, nil
	}
	if _, err := w.runAs("upgradeDbtJobs:events", `UNWIND $rows AS row
		MATCH (e:Event {key: row.key})
		SET e.payload = row.payload
		WITH e, row WHERE row.about <> ''
		OPTIONAL MATCH (e)-[a:ABOUT_JOB]->()
		DELETE a
		WITH DISTINCT e, row
		MERGE (j:Job {key: row.about})
		MERGE (e)-[:ABOUT_JOB]->(j)`, map[string]any{"rows": rows}); err != nil {
		return 0, err
	}
	var plan jobPlan
	q, err := w.upsertJobs(moved)
	if err != nil {
		return 0, err
	}
	plan.merge(q)
	runs := map[string]bool{}
	for _, r := range moved {
		if k := r.runKey(); k != "" && r.PubRunID == "" {
			runs[k] = true
		}
	}
	folded, err := w.refoldRuns(ordered.Keys(runs), nil)
	if err != nil {
		return 0, err
	}
	plan.runs = folded.states
	plan.merge(folded.jobs)
	if q, err = w.restateJobs(ordered.Keys(oldJobs)); err != nil {
		return 0, err
	}
	plan.merge(q)
	for k := range oldJobs {
		w.touch(k)
		plan.add(k)
	}
	plan.allFull() // the jobs gained or lost runs: fold them from all their runs
	if err := w.projectJobEdges(plan); err != nil {
		return 0, err
	}
	_, err = w.runAs("upgradeDbtJobs:empty", `UNWIND $jobs AS k
		MATCH (j:Job {key: k})
		WHERE NOT EXISTS { MATCH (:Run)-[:OF_JOB]->(j) } AND NOT EXISTS { MATCH (:Event)-[:ABOUT_JOB]->(j) }
		OPTIONAL MATCH (j)-[:HAS_VERSION]->(v:JobVersion)
		OPTIONAL MATCH (c:JobCheckpoint {jobKey: k})
		DETACH DELETE j, v, c`, map[string]any{"jobs": toAny(ordered.Keys(oldJobs))})
	return len(moved), err
}

// restateJobs recomputes the first/last seen times and descriptive metadata of the jobs (those that lost events to
// a dbt node job) from the events they still have: a facet-less job sharing a name with a dbt node job keeps only
// what its own events said. It returns the jobs it restated.
func (w *txWriter) restateJobs(jobs []string) (jobQueue, error) {
	out, err := w.runAs("upgradeDbtJobs:restate", `UNWIND $jobs AS k
		MATCH (j:Job {key: k})
		CALL (j) {
			MATCH (e:Event)-[:OF_RUN]->(:Run)-[:OF_JOB]->(j)
			RETURN e
			UNION
			MATCH (e:Event)-[:ABOUT_JOB]->(j)
			RETURN e
		}
		WITH j, k, collect(e.payload) AS ps
		SET j.firstSeenAt = null, j.lastSeenAt = null, j.metaStamps = null, j.processingType = null,
			j.jobType = null, j.integration = null, j.description = null, j.jobTagLog = null, j.jobTagHistory = null
		SET j += $noStamps
		RETURN k, ps`, map[string]any{"jobs": toAny(jobs), "noStamps": noStamps()})
	if err != nil {
		return jobQueue{}, err
	}
	var recs []*rec
	for _, row := range out {
		k, _ := row.Get("k")
		ps, _ := row.Get("ps")
		for _, p := range ps.([]any) {
			r, err := decodeRec(p)
			if err != nil {
				return jobQueue{}, err
			}
			if r.Job != nil && r.Job.Key == asStr(k) {
				recs = append(recs, r)
			}
		}
	}
	return w.upsertJobs(recs)
}
