// Package lineagetest builds fixture graphs for query tests and benchmarks by writing the model of
// docs/graph-model.md directly with Cypher, under one unique namespace per fixture. It is test support: no
// production code imports it.
package lineagetest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Fixture writes one test's graph.
type Fixture struct {
	t     testing.TB
	Store *graph.Store
	NS    string    // the fixture's unique namespace
	Env   string    // environment of every dataset ("" like the identity canonicaliser)
	Now   time.Time // the fixture's "now"; give the service the same clock
	T0    time.Time // when every default interval opens (Now - 30 days)
	// Principal is the producer principal the fixture's events and quarantine records were sent by (their node
	// keys are graph.EventKey(Principal, id)).
	Principal string
}

// New opens a fixture under a fresh namespace.
func New(t testing.TB, store *graph.Store) *Fixture {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &Fixture{t: t, Store: store, NS: testenv.Namespace(t), Now: now, T0: now.Add(-30 * 24 * time.Hour)}
}

// Clock returns the fixture's fixed clock.
func (f *Fixture) Clock() func() time.Time { return func() time.Time { return f.Now } }

func (f *Fixture) exec(cypher string, params map[string]any) {
	f.t.Helper()
	_, err := neo4j.ExecuteQuery(context.Background(), f.Store.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(f.Store.Database))
	if err != nil {
		f.t.Fatalf("fixture write: %v\n%s", err, cypher)
	}
}

func ms(t time.Time) int64 { return graph.Millis(t) }

// Dataset creates a dataset named name in the fixture's namespace, with its PRIMARY name, and returns its key.
func (f *Fixture) Dataset(name string) string {
	key := graph.DatasetKey(f.Env, f.NS, name)
	f.exec(`MERGE (d:Dataset {key: $key}) SET d.namespace = $ns, d.name = $name, d.env = $env, d.createdAt = $t0,
  d.tags = [], d.updatedAt = $t0, d.searchName = toLower($name)
MERGE (n:DatasetName {ident: $ident}) SET n.namespace = $ns, n.name = $name, n.env = $env
MERGE (n)-[r:NAMES]->(d) SET r.kind = 'PRIMARY', r.validFrom = $t0, r.validTo = $open`,
		map[string]any{"key": key, "ns": f.NS, "name": name, "env": f.Env, "t0": ms(f.T0),
			"ident": graph.DatasetIdent(f.Env, f.NS, name), "open": graph.OpenEnd})
	return key
}

// Rename renames dataset key (currently named oldName) to newName at time at.
func (f *Fixture) Rename(key, oldName, newName string, at time.Time) {
	f.exec(`MATCH (d:Dataset {key: $key})
MATCH (:DatasetName {ident: $old})-[r:NAMES]->(d) SET r.kind = 'RENAMED', r.validTo = $at
MERGE (n:DatasetName {ident: $new}) SET n.namespace = $ns, n.name = $name, n.env = $env
MERGE (n)-[p:NAMES]->(d) SET p.kind = 'PRIMARY', p.validFrom = $at, p.validTo = $open
SET d.name = $name, d.searchName = toLower($name)`, map[string]any{"key": key, "old": graph.DatasetIdent(f.Env, f.NS, oldName),
		"new": graph.DatasetIdent(f.Env, f.NS, newName), "ns": f.NS, "name": newName, "env": f.Env,
		"at": ms(at), "open": graph.OpenEnd})
}

// Job creates a job with runs evidence for staleness: runs runs between firstSeen and lastSeen.
func (f *Fixture) Job(name string) string {
	key := graph.JobKey(f.NS, name)
	f.exec(`MERGE (j:Job {key: $key}) SET j.namespace = $ns, j.name = $name, j.searchName = toLower($name), j.processingType = 'BATCH',
  j.firstSeenAt = $t0, j.lastSeenAt = $now`,
		map[string]any{"key": key, "ns": f.NS, "name": name, "t0": ms(f.T0), "now": ms(f.Now)})
	return key
}

// Span is how a fixture writes one stored validity interval (graph.Interval) in times: zero To is open (OpenEnd),
// empty Pub is PUBLISHED.
type Span struct {
	From, To time.Time
	Pub      string
}

// stored is the span as the graph stores it.
func (s Span) stored() graph.Interval {
	iv := graph.Interval{From: ms(s.From), To: graph.OpenEnd, Pub: s.Pub}
	if !s.To.IsZero() {
		iv.To = ms(s.To)
	}
	if iv.Pub == "" {
		iv.Pub = graph.PubPublished
	}
	return iv
}

// Leg describes one lineage relationship. Zero values mean: OBSERVED, open since T0, PUBLISHED, observed an
// hour ago by a COMPLETE run.
type Leg struct {
	Kind         string
	Intervals    []Span
	LastObserved time.Time
	RunState     string
	RunID        string
}

func (f *Fixture) legProps(l Leg) map[string]any {
	if l.Kind == "" {
		l.Kind = graph.KindObserved
	}
	if len(l.Intervals) == 0 {
		l.Intervals = []Span{{From: f.T0}}
	}
	if l.LastObserved.IsZero() {
		l.LastObserved = f.Now.Add(-time.Hour)
	}
	if l.RunState == "" {
		l.RunState = "COMPLETE"
	}
	ivs := make([]graph.Interval, len(l.Intervals))
	for i, s := range l.Intervals {
		ivs[i] = s.stored()
	}
	props := graph.IntervalProps(ivs)
	maps.Copy(props, map[string]any{"kind": l.Kind,
		"firstObservedAt": ms(l.Intervals[0].From), "lastObservedAt": ms(l.LastObserved), "producer": "https://test/producer",
		"eventIds": []any{"ev-" + f.NS}, "jobVersion": "v1", "lastRunId": l.RunID, "lastRunState": l.RunState,
		"derivation": derivation(l.Kind), "normVersion": 1})
	return props
}

func derivation(kind string) string {
	if kind == graph.KindDeclared {
		return "jobEvent"
	}
	return "run"
}

// Input links dataset -> job (INPUT_TO) with leg l.
func (f *Fixture) Input(dataset, job string, l Leg) {
	f.exec(`MATCH (d:Dataset {key: $d}), (j:Job {key: $j}) CREATE (d)-[r:INPUT_TO]->(j) SET r = $p`,
		map[string]any{"d": dataset, "j": job, "p": f.legProps(l)})
}

// Output links job -> dataset (OUTPUT_TO) with leg l.
func (f *Fixture) Output(job, dataset string, l Leg) {
	f.exec(`MATCH (d:Dataset {key: $d}), (j:Job {key: $j}) CREATE (j)-[r:OUTPUT_TO]->(d) SET r = $p`,
		map[string]any{"d": dataset, "j": job, "p": f.legProps(l)})
}

// Flow makes job read every input and write every output with default legs.
func (f *Fixture) Flow(job string, inputs, outputs []string) {
	for _, in := range inputs {
		f.Input(in, job, Leg{})
	}
	for _, out := range outputs {
		f.Output(job, out, Leg{})
	}
}

// Declared writes a DECLARED_FEEDS relationship (declared lineage without a job).
func (f *Fixture) Declared(from, to string) {
	p := f.legProps(Leg{Kind: graph.KindDeclared})
	f.exec(`MATCH (a:Dataset {key: $a}), (b:Dataset {key: $b}) CREATE (a)-[r:DECLARED_FEEDS]->(b) SET r = $p`,
		map[string]any{"a": from, "b": to, "p": p})
}

// Field creates a field of dataset valid over [from, to) (zero to: open) and returns its key.
func (f *Fixture) Field(dataset, path string, from, to time.Time) string {
	key := graph.FieldKey(dataset, path, ms(from))
	end := graph.OpenEnd
	if !to.IsZero() {
		end = ms(to)
	}
	f.exec(`MATCH (d:Dataset {key: $d}) MERGE (x:Field {key: $key})
SET x.datasetKey = $d, x.path = $path, x.type = 'string', x.validFrom = $from, x.validTo = $to
MERGE (d)-[:HAS_FIELD]->(x)`, map[string]any{"d": dataset, "key": key, "path": path, "from": ms(from), "to": end})
	return key
}

// Transform is one transformation of a column edge.
type Transform struct {
	Type, Subtype, Description string
	Masking                    bool
}

// ColumnFeeds writes a COLUMN_FEEDS edge from -> to through job, open since T0.
func (f *Fixture) ColumnFeeds(from, to, job string, ts ...Transform) {
	f.ColumnFeedsLeg(from, to, job, Leg{}, ts...)
}

// ColumnFeedsLeg writes a COLUMN_FEEDS edge from -> to through job with leg l (its intervals, kind, ...).
func (f *Fixture) ColumnFeedsLeg(from, to, job string, l Leg, ts ...Transform) {
	p := f.legProps(l)
	p["jobKey"] = job
	types, subs, masks, descs := []any{}, []any{}, []any{}, []any{}
	for _, t := range ts {
		types, subs, masks, descs = append(types, t.Type), append(subs, t.Subtype), append(masks, t.Masking), append(descs, t.Description)
	}
	p["tTypes"], p["tSubtypes"], p["tMasking"], p["tDescriptions"] = types, subs, masks, descs
	f.exec(`MATCH (a:Field {key: $a}), (b:Field {key: $b}) CREATE (a)-[r:COLUMN_FEEDS]->(b) SET r = $p`,
		map[string]any{"a": from, "b": to, "p": p})
}

// Unresolved records an unresolved identity naming ns/name.
func (f *Fixture) Unresolved(ns, name, reason string) {
	f.exec(`MERGE (u:UnresolvedIdentity {key: $key}) SET u.namespace = $ns, u.name = $name, u.reason = $reason,
  u.firstSeenAt = $now, u.lastSeenAt = $now`, map[string]any{"key": graph.UnresolvedKey(ns, name, reason),
		"ns": ns, "name": name, "reason": reason, "now": ms(f.Now)})
}

// Run writes a run of job with what it read and wrote, and its events (one per state, a minute apart).
func (f *Fixture) Run(runID, job string, reads, writes []string, writePub string, states ...string) {
	f.exec(`MATCH (j:Job {key: $job}) MERGE (r:Run {key: $id})
SET r.jobKey = $job, r.state = $state, r.conflictingStates = [], r.startedAt = $start, r.lastEventTime = $start
MERGE (r)-[:OF_JOB]->(j)
WITH r UNWIND $reads AS d MATCH (ds:Dataset {key: d}) MERGE (r)-[x:READ]->(ds) SET x.firstAt = $start, x.lastAt = $start`,
		map[string]any{"job": job, "id": runID, "state": states[len(states)-1], "start": ms(f.Now.Add(-time.Hour)), "reads": toAny(reads)})
	f.exec(`MATCH (r:Run {key: $id}) UNWIND $writes AS d MATCH (ds:Dataset {key: d})
MERGE (r)-[x:WROTE]->(ds) SET x.firstAt = $start, x.lastAt = $start, x.publication = $pub, x.datasetVersion = 'snap-1'`,
		map[string]any{"id": runID, "writes": toAny(writes), "pub": writePub, "start": ms(f.Now.Add(-time.Hour))})
	for i, s := range states {
		f.exec(`MATCH (r:Run {key: $id}) MERGE (e:Event {key: $ek}) SET e.runKey = $id, e.kind = 'RUN', e.eventType = $s,
  e.eventTime = $t, e.receivedAt = $t, e.producer = 'https://test/producer' MERGE (e)-[:OF_RUN]->(r)`,
			map[string]any{"id": runID, "ek": graph.EventKey(f.Principal, fmt.Sprintf("%s-ev-%d", runID, i)), "s": s, "t": ms(f.Now.Add(-time.Hour + time.Duration(i)*time.Minute))})
	}
}

// Quarantined records a quarantined event.
func (f *Fixture) Quarantined(id, reason string) {
	f.exec(`MERGE (q:Quarantined {key: $id}) SET q.reason = $reason, q.field = 'run.runId', q.producer = 'https://test/producer',
  q.receivedAt = $now`, map[string]any{"id": graph.EventKey(f.Principal, id), "reason": reason, "now": ms(f.Now)})
}

// Exec runs arbitrary Cypher against the fixture's store (for edits a builder method does not cover).
func (f *Fixture) Exec(cypher string, params map[string]any) { f.exec(cypher, params) }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
