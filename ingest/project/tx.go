package project

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/rules"
)

// txWriter holds the state of one attempt of the batch transaction.
type txWriter struct {
	ctx        context.Context
	tx         neo4j.ManagedTransaction
	token      string
	touched    map[string]bool
	unresolved int
	stepTimes  map[string]time.Duration // optional, for measurements
	steps      *prometheus.HistogramVec // step durations by step name
	statements *prometheus.HistogramVec // statement durations by the function that ran them
	restores   prometheus.Counter       // datasets whose sealed log was restored for a late event
	folds      *prometheus.CounterVec
	foldRuns   prometheus.Counter
	recent     *recentEvents // committed events' recs, whose payloads need not be read back
	fold       *foldTx       // the attempt's dataset fold-state work (dsfold.go)
	jobs       *jobTx        // the attempt's job fold-state work (jobfold.go; nil: none, write through)
}

func (w *txWriter) run(query string, params map[string]any) ([]*neo4j.Record, error) {
	if w.statements != nil {
		defer w.observeStatement(time.Now(), "")
	}
	return w.exec(query, params)
}

// runAs is run with the statement metric labelled name instead of the calling function's name (for functions
// that run several statements).
func (w *txWriter) runAs(name, query string, params map[string]any) ([]*neo4j.Record, error) {
	if w.statements != nil {
		defer w.observeStatement(time.Now(), name)
	}
	return w.exec(query, params)
}

func (w *txWriter) exec(query string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := w.tx.Run(w.ctx, query, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(w.ctx)
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// observeStatement records a statement's time under name, or the name of the function that ran it.
func (w *txWriter) observeStatement(start time.Time, name string) {
	if name != "" {
		w.statements.WithLabelValues(name).Observe(time.Since(start).Seconds())
		return
	}
	name = "unknown"
	if pc, _, _, ok := runtime.Caller(2); ok {
		if f := runtime.FuncForPC(pc); f != nil {
			name = f.Name()[strings.LastIndex(f.Name(), ".")+1:]
		}
	}
	w.statements.WithLabelValues(name).Observe(time.Since(start).Seconds())
}

func (w *txWriter) touch(keys ...string) {
	for _, k := range keys {
		if k != "" {
			w.touched[k] = true
		}
	}
}

// apply runs the projection steps in a fixed order: claim events, bind identities, store payloads, jobs,
// datasets, runs, job edges. Each step's outcome is passed to the steps that use it (plan.go); it returns the
// Result and the events this attempt applied. refold are the datasets this instance holds unsaved changes of
// whose save or write was refused (another writer wrote the node, from a state without those changes): the
// dataset step reloads them, re-applies the changes and writes every derived value again (dsfold.go,
// refoldStale).
func (w *txWriter) apply(recs []*rec, refold []string) (Result, []*rec, error) {
	var c claimed
	if err := w.step("claim events", func() (err error) { c, err = w.claimEvents(recs); return err }); err != nil {
		return Result{}, nil, err
	}
	fresh := c.fresh
	res := Result{Duplicates: len(recs) - len(fresh) - len(c.conflicts), Projected: len(fresh),
		IDConflicts: len(c.conflicts)}
	if len(fresh) == 0 && len(c.replayed) == 0 && len(refold) == 0 {
		return res, fresh, nil
	}
	// With only replayed events or refolded states, the dataset state runs, and the job edges its changes queue.
	var jobs, datasets jobQueue
	var runs runFolds
	steps := []struct {
		name   string
		always bool
		fn     func() error
	}{
		{"bind identities", false, func() error { return w.bindIdentities(fresh) }},
		{"store events", false, func() error { return w.storeEvents(fresh) }},
		{"upsert jobs", false, func() (err error) { jobs, err = w.upsertJobs(fresh); return err }},
		{"project datasets", true, func() (err error) { datasets, err = w.projectDatasets(fresh, c.replayed, refold); return err }},
		{"project runs", false, func() (err error) { runs, err = w.projectRuns(fresh); return err }},
		{"project job edges", true, func() error {
			plan := jobPlan{runs: runs.states, fresh: fresh}
			plan.merge(jobs)
			plan.merge(datasets)
			plan.merge(runs.jobs)
			return w.projectJobEdges(plan)
		}},
	}
	for _, s := range steps {
		if len(fresh) == 0 && !s.always {
			continue
		}
		if err := w.step(s.name, s.fn); err != nil {
			return Result{}, nil, err
		}
	}
	res.Unresolved = w.unresolved
	for k := range w.touched {
		res.Touched = append(res.Touched, k)
	}
	sort.Strings(res.Touched)
	return res, fresh, nil
}

// step runs one projection step, timing it, and names it in its error.
func (w *txWriter) step(name string, fn func() error) error {
	start := time.Now()
	if err := fn(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if w.stepTimes != nil && name != "claim events" {
		w.stepTimes[name] += time.Since(start)
	}
	if w.steps != nil {
		w.steps.WithLabelValues(name).Observe(time.Since(start).Seconds())
	}
	return nil
}

// claimEvents MERGEs the Event nodes and returns the recs whose event this transaction created; the others were
// applied before: duplicates, or, when the stored event has another content digest, id conflicts (recorded as
// quarantined, rule id-conflict); and the events read again from the position they were first projected from.
// MERGE on the unique key serialises concurrent deliveries of one event.
func (w *txWriter) claimEvents(recs []*rec) (claimed, error) {
	var c claimed
	if len(recs) == 0 {
		return c, nil
	}
	first := map[string]*rec{}
	rows := make([]any, 0, len(recs))
	for _, r := range recs {
		if first[r.key()] == nil {
			first[r.key()] = r
			rows = append(rows, map[string]any{"key": r.key(), "pos": r.posName()})
		}
	}
	// An event claimed before from this very position is being replayed (after a crash): its payload comes back
	// for the dataset fold state (dsfold.go).
	out, err := w.run(`UNWIND $rows AS row
		MERGE (e:Event {key: row.key}) ON CREATE SET e.claim = $token
		WITH e, row, coalesce(e.claim = $token, false) AS fresh
		FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END | REMOVE e.claim)
		RETURN row.key AS key, fresh, e.digest AS digest,
			CASE WHEN NOT fresh AND row.pos <> '' AND e.pos = row.pos THEN e.payload END AS replay`,
		map[string]any{"rows": rows, "token": w.token})
	if err != nil {
		return c, err
	}
	created, stored := map[string]bool{}, map[string]string{}
	for _, rec := range out {
		k, _ := rec.Get("key")
		f, _ := rec.Get("fresh")
		d, _ := rec.Get("digest")
		created[k.(string)], stored[k.(string)] = f == true, asStr(d)
		if p, _ := rec.Get("replay"); p != nil {
			stored, err := replayed(first[asStr(k)], p)
			if err != nil {
				return c, err
			}
			c.replayed = append(c.replayed, stored)
		}
	}
	c.fresh = make([]*rec, 0, len(created))
	for _, r := range recs {
		k := r.key()
		against := stored[k]
		if created[k] {
			if first[k] == r {
				c.fresh = append(c.fresh, r)
				continue
			}
			against = first[k].Digest
		}
		if digestsDiffer(against, r.Digest) {
			c.conflicts = append(c.conflicts, r)
		}
	}
	return c, w.recordConflicts(c.conflicts)
}

// digestsDiffer tells an id conflict from a duplicate; an unknown digest (events stored before projection
// version 2, hand-built events) never conflicts.
func digestsDiffer(a, b string) bool { return a != "" && b != "" && a != b }

// recordConflicts stores the batch's id conflicts as Quarantined records under the event's key, so the producer
// sees them in event(id). The event projected first under that id stays as it is.
func (w *txWriter) recordConflicts(conflicts []*rec) error {
	if len(conflicts) == 0 {
		return nil
	}
	rows := make([]any, 0, len(conflicts))
	for _, r := range conflicts {
		rows = append(rows, map[string]any{"key": r.key(), "eventId": r.ID, "producer": r.Producer, "principal": r.Principal,
			"receivedAt": r.Recv, "reason": "id-conflict: event id " + r.ID + " was already used by this producer " +
				"for an event with other content; this event was not projected (send it under a new id)"})
	}
	_, err := w.run(`UNWIND $rows AS r
		MERGE (q:Quarantined {key: r.key})
		SET q.eventId = r.eventId, q.reason = r.reason, q.field = 'eventId', q.rule = $rule, q.producer = r.producer,
			q.principal = r.principal, q.stage = 'projector', q.receivedAt = r.receivedAt`,
		map[string]any{"rows": rows, "rule": rules.IDConflict})
	return err
}

// storeEvents writes each event's properties and canonical payload and links it to its run or job.
func (w *txWriter) storeEvents(recs []*rec) error {
	rows := make([]any, 0, len(recs))
	for _, r := range recs {
		payload, err := encodePayload(r)
		if err != nil {
			return err
		}
		runKey, jobKey := r.runKey(), ""
		if r.Kind == "JOB" {
			jobKey = r.Job.Key
		}
		props := map[string]any{"kind": r.Kind, "eventType": r.Type, "eventTime": r.Time, "receivedAt": r.Recv,
			"producer": r.Producer, "normVersion": NormVersion, "payload": payload, "ptag": w.token,
			"eventId": r.ID, "principal": nilIfEmpty(r.Principal), "digest": nilIfEmpty(r.Digest),
			"pos": nilIfEmpty(r.posName())}
		if r.Subject != nil && r.Subject.ID != nil {
			props["subjectNamespace"] = r.Subject.ID.NS // the dataset a DatasetEvent is about (Dump selects by it)
		}
		// A publication DatasetEvent is stored under its runId's group key, which names no node: every run of
		// that runId reads it (runs.go), and it links to none.
		link := runKey != "" && r.PubRunID == ""
		rows = append(rows, map[string]any{"key": r.key(), "props": props, "runKey": runKey, "link": link,
			"jobKey": jobKey})
	}
	_, err := w.run(`UNWIND $rows AS row
		MATCH (e:Event {key: row.key})
		SET e += row.props
		FOREACH (_ IN CASE WHEN row.runKey <> '' THEN [1] ELSE [] END | SET e.runKey = row.runKey)
		FOREACH (_ IN CASE WHEN row.link THEN [1] ELSE [] END |
			MERGE (r:Run {key: row.runKey})
			MERGE (e)-[:OF_RUN]->(r))
		FOREACH (_ IN CASE WHEN row.jobKey <> '' THEN [1] ELSE [] END |
			MERGE (j:Job {key: row.jobKey})
			MERGE (e)-[:ABOUT_JOB]->(j))`, map[string]any{"rows": rows})
	return err
}

func openEnd() int64 { return graph.OpenEnd }

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func asStr(v any) string {
	s, _ := v.(string)
	return s
}
