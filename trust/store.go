package trust

import (
	"context"
	"fmt"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// Reader is what the signals read (Store over Neo4j). Every method takes the filter it can apply in the
// database; permissions are applied by the Service on what it returns.
type Reader interface {
	InventoryVersion(ctx context.Context) (string, error)
	ExpectedJobs(ctx context.Context, f Filter) ([]ExpectedRow, error)
	JobsNamed(ctx context.Context, names [][2]string) ([]ReportedJob, error)
	ExpectedWritersOf(ctx context.Context, outputs []string) ([]ExpectedRow, error)
	DbtJobs(ctx context.Context, namespace string) ([]ReportedJob, error)
	JobProducers(ctx context.Context, jobKeys []string) (map[string][]JobProducer, error)
	Canaries(ctx context.Context) ([]CanaryRow, error)
	Runs(ctx context.Context, f Filter, from, cutoff int64) ([]JobRuns, error)
	Edges(ctx context.Context, f Filter, now int64) ([]EdgeRow, error)
	WrittenDatasets(ctx context.Context, f Filter, now int64) ([]DatasetRow, error)
	Unresolved(ctx context.Context, f Filter, from int64) ([]UnresolvedRow, error)
	Activity(ctx context.Context, producer string, from int64) ([]ActivityRow, error)
	Rejections(ctx context.Context, producer string, from int64) ([]RejectRow, error)
	Samples(ctx context.Context, sig Signal, from int64) ([]Point, error)
	StoreSamples(ctx context.Context, points []map[string]any, before int64) error
}

// Filter is what a request narrows the signals to ("" = any).
type Filter struct {
	Namespace   string
	Criticality string
}

// ReportedJob is a Job node an expected job matched.
type ReportedJob struct {
	Key, Namespace, Name, DbtUniqueID, DbtRole string
	Names                                      []string // every name a dbt node job was reported under (ADR 0027)
	LastSeenAt                                 int64
}

// ExpectedRow is one active expected job and the reported jobs its match names found.
type ExpectedRow struct {
	Key, Source, Namespace, Name, Type, Criticality, Owner, Schedule, DbtUniqueID string
	IntervalMs                                                                    int64
	Paused                                                                        bool
	Outputs                                                                       []string // "namespace|name"
	MatchNames                                                                    []string
	DbtMatches                                                                    []string // "<unique_id>|<role>"
	Matched                                                                       []ReportedJob
}

// JobRuns are one job's runs started in a window.
type JobRuns struct {
	Job     ReportedJob
	Started int64
	Open    []OpenRun // runs still without a terminal event, started before the cutoff
}

// OpenRun is a run with START (or RUNNING) and no terminal event.
type OpenRun struct {
	Key, RunID, State string
	StartedAt         int64
}

// EdgeRow is one current OBSERVED dataset-job relationship.
type EdgeRow struct {
	Job                          ReportedJob
	FirstSeenAt                  int64
	Runs                         int64
	DatasetKey, DatasetNamespace string
	DatasetName, Direction       string
	LastObservedAt               int64
}

// DatasetRow is a dataset some job currently writes: its writers and the sources of its column lineage in force.
type DatasetRow struct {
	Key, Namespace, Name string
	Writers              []ReportedJob  // at most maxWriters
	ColumnSources        []ColumnSource // distinct (source dataset, job), at most maxColumnSources
}

// ColumnSource is a dataset and a job a current COLUMN_FEEDS edge into the dataset comes from.
type ColumnSource struct {
	DatasetKey, DatasetNamespace, DatasetName string
	Job                                       ReportedJob
}

// Bounds of one dataset's row: a dataset counts as written, and as having column lineage, when one of these the
// caller may see says so (so a dataset whose first sources are all hidden can be under-reported, never leaked).
const (
	maxWriters       = 20
	maxColumnSources = 50
)

// UnresolvedRow is one unresolved identity.
type UnresolvedRow struct {
	Namespace, Name, Reason string
	LastSeenAt              int64
}

// ActivityRow is one producer principal's events over the lookback.
type ActivityRow struct {
	Producer string
	Minutes  []int64 // distinct minutes (epoch ms / 60000) with at least one event received, ascending
	Counts   []int64 // events received in each of Minutes
	Last     int64   // latest receivedAt
}

// RejectRow counts rejected (quarantined) events of one producer for one rule.
type RejectRow struct {
	Producer, Rule string
	Count          int64
	Last           int64
}

// Store reads the signals from Neo4j.
type Store struct{ g *graph.Store }

var _ Reader = (*Store)(nil)

// NewStore returns the Neo4j reader.
func NewStore(g *graph.Store) *Store { return &Store{g: g} }

func (s *Store) read(ctx context.Context, cypher string, params map[string]any) ([]graph.Props, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.g.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("trust read: %w", err)
	}
	out := make([]graph.Props, len(res.Records))
	for i, r := range res.Records {
		out[i] = graph.Props(r.AsMap())
	}
	return out, nil
}

func filterParams(f Filter) map[string]any {
	return map[string]any{"ns": f.Namespace, "crit": f.Criticality}
}

// expectedReturn matches an expected job e to the jobs its match names find (one index seek per name) and
// returns both.
const expectedReturn = `
CALL (e) {
  UNWIND e.matchNames AS n
  MATCH (j:Job {namespace: e.namespace, name: n})
  RETURN collect(j{.key, .namespace, .name, .lastSeenAt, .dbtUniqueId}) AS jobs
}
RETURN ` + expectedProps + ` AS e, jobs ORDER BY e.namespace, e.name, e.source`

// expectedProps are the properties of an expected job the signals read.
const expectedProps = `e{.key, .source, .namespace, .name, .type, .criticality, .owner, .schedule, .dbtUniqueId,
  .intervalMs, .paused, .outputs, .matchNames, .dbtMatches}`

// InventoryVersion identifies the stored inventories: it changes with every registration that writes and every
// retirement (each sets the source's digest, registeredAt or retiredAt), so expected jobs read under one
// version can be reused while it holds.
func (s *Store) InventoryVersion(ctx context.Context) (string, error) {
	rows, err := s.read(ctx, `MATCH (s:InventorySource)
RETURN s.key + '|' + coalesce(s.digest, '') + '|' + toString(coalesce(s.registeredAt, 0)) + '|' +
  toString(coalesce(s.retiredAt, 0)) AS v ORDER BY v`, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.Str("v"))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// ExpectedJobs reads the active expected jobs of the filter, without their matches (JobsNamed, DbtJobs).
func (s *Store) ExpectedJobs(ctx context.Context, f Filter) ([]ExpectedRow, error) {
	rows, err := s.read(ctx, `MATCH (e:ExpectedJob)
WHERE e.retiredAt IS NULL AND ($ns = '' OR e.namespace = $ns) AND ($crit = '' OR e.criticality = $crit)
RETURN `+expectedProps+` AS e ORDER BY e.namespace, e.name, e.source`, filterParams(f))
	if err != nil {
		return nil, err
	}
	return expectedRows(rows), nil
}

// JobsNamed reads the jobs named by (namespace, name) pairs (one index seek each).
func (s *Store) JobsNamed(ctx context.Context, names [][2]string) ([]ReportedJob, error) {
	pairs := make([]any, len(names))
	for i, n := range names {
		pairs[i] = []any{n[0], n[1]}
	}
	rows, err := s.read(ctx, `UNWIND $pairs AS p MATCH (j:Job {namespace: p[0], name: p[1]})
RETURN j{.key, .namespace, .name, .lastSeenAt, .dbtUniqueId, .dbtRole, .names} AS j`, map[string]any{"pairs": pairs})
	if err != nil {
		return nil, err
	}
	out := make([]ReportedJob, len(rows))
	for i, r := range rows {
		out[i] = reportedJob(r.Sub("j"))
	}
	return out, nil
}

// ExpectedWritersOf reads the active expected jobs that list one of outputs ("namespace|name", canonical) as an
// expected output, with their matches.
func (s *Store) ExpectedWritersOf(ctx context.Context, outputs []string) ([]ExpectedRow, error) {
	rows, err := s.read(ctx, `MATCH (e:ExpectedJob)
WHERE e.retiredAt IS NULL AND any(o IN e.outputs WHERE o IN $outs)`+expectedReturn, map[string]any{"outs": outputs})
	if err != nil {
		return nil, err
	}
	return expectedRows(rows), nil
}

func expectedRows(rows []graph.Props) []ExpectedRow {
	out := make([]ExpectedRow, len(rows))
	for i, r := range rows {
		e := r.Sub("e")
		out[i] = ExpectedRow{Key: e.Str("key"), Source: e.Str("source"), Namespace: e.Str("namespace"),
			Name: e.Str("name"), Type: e.Str("type"), Criticality: e.Str("criticality"), Owner: e.Str("owner"),
			Schedule: e.Str("schedule"), DbtUniqueID: e.Str("dbtUniqueId"), IntervalMs: e.Int("intervalMs"),
			Paused: e.Bool("paused"), Outputs: e.Strs("outputs"), MatchNames: e.Strs("matchNames"), DbtMatches: e.Strs("dbtMatches")}
		for _, j := range r.List("jobs") {
			out[i].Matched = append(out[i].Matched, reportedJob(j))
		}
	}
	return out
}

func reportedJob(j graph.Props) ReportedJob {
	return ReportedJob{Key: j.Str("key"), Namespace: j.Str("namespace"), Name: j.Str("name"),
		LastSeenAt: j.Int("lastSeenAt"), DbtUniqueID: j.Str("dbtUniqueId"), DbtRole: j.Str("dbtRole"), Names: j.Strs("names")}
}

// DbtJobs reads the dbt node jobs (ADR 0027: dbtUniqueId, dbtRole and names, set by the projector from the
// dbt_node facet), in one namespace or all.
func (s *Store) DbtJobs(ctx context.Context, namespace string) ([]ReportedJob, error) {
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns) AND j.dbtUniqueId IS NOT NULL
RETURN j{.key, .namespace, .name, .lastSeenAt, .dbtUniqueId, .dbtRole, .names} AS j`, map[string]any{"ns": namespace})
	if err != nil {
		return nil, err
	}
	out := make([]ReportedJob, len(rows))
	for i, r := range rows {
		out[i] = reportedJob(r.Sub("j"))
	}
	return out, nil
}

// Runs counts, per job, the runs whose first event is at or after from, and lists those still in START or
// RUNNING that started before cutoff (batch jobs only: streaming and service jobs have no terminal event).
func (s *Store) Runs(ctx context.Context, f Filter, from, cutoff int64) ([]JobRuns, error) {
	p := filterParams(f)
	p["from"], p["cutoff"] = from, cutoff
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns)
  AND NOT coalesce(j.processingType, '') IN ['STREAMING', 'SERVICE']
MATCH (r:Run {jobKey: j.key}) WHERE r.firstEventAt >= $from
WITH j, count(r) AS started,
  collect(CASE WHEN r.state IN ['START', 'RUNNING'] AND coalesce(r.startedAt, r.firstEventAt) < $cutoff
    THEN r{.key, .runId, .state, startedAt: coalesce(r.startedAt, r.firstEventAt)} END)[..`+itoa(MaxItemsKept)+`] AS open
RETURN j{.key, .namespace, .name, .lastSeenAt} AS j, started, open`, p)
	if err != nil {
		return nil, err
	}
	out := make([]JobRuns, len(rows))
	for i, r := range rows {
		out[i] = JobRuns{Job: reportedJob(r.Sub("j")), Started: r.Int("started")}
		for _, o := range r.List("open") {
			out[i].Open = append(out[i].Open, OpenRun{Key: o.Str("key"), RunID: o.Str("runId"), State: o.Str("state"),
				StartedAt: o.Int("startedAt")})
		}
	}
	return out, nil
}

// Edges reads the current OBSERVED relationships of jobs (INPUT_TO and OUTPUT_TO) with what the staleness rule
// needs.
func (s *Store) Edges(ctx context.Context, f Filter, now int64) ([]EdgeRow, error) {
	p := filterParams(f)
	p["now"] = now
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns)
WITH j, COUNT { (j)<-[:OF_JOB]-() } AS runs
MATCH (j)-[e:OUTPUT_TO|INPUT_TO]-(d:Dataset) WHERE e.kind = 'OBSERVED' AND e.validTo > $now
RETURN j{.key, .namespace, .name, .lastSeenAt} AS j, j.firstSeenAt AS first, runs, d.key AS dk, d.namespace AS dns,
  d.name AS dn, type(e) AS dir, e.lastObservedAt AS last`, p)
	if err != nil {
		return nil, err
	}
	out := make([]EdgeRow, len(rows))
	for i, r := range rows {
		out[i] = EdgeRow{Job: reportedJob(r.Sub("j")), FirstSeenAt: r.Int("first"), Runs: r.Int("runs"),
			DatasetKey: r.Str("dk"), DatasetNamespace: r.Str("dns"), DatasetName: r.Str("dn"), Direction: r.Str("dir"),
			LastObservedAt: r.Int("last")}
	}
	return out, nil
}

// WrittenDatasets reads the datasets (of the namespace) some job currently writes (an OBSERVED OUTPUT_TO in
// force) with their writers and the sources of their column lineage in force.
func (s *Store) WrittenDatasets(ctx context.Context, f Filter, now int64) ([]DatasetRow, error) {
	p := filterParams(f)
	p["now"] = now
	rows, err := s.read(ctx, `MATCH (w:Job)-[e:OUTPUT_TO]->(d:Dataset)
WHERE e.kind = 'OBSERVED' AND e.validTo > $now AND ($ns = '' OR d.namespace = $ns) AND d.droppedAt IS NULL
WITH d, collect(DISTINCT w{.key, .namespace, .name})[..`+itoa(maxWriters)+`] AS writers
CALL (d) {
  OPTIONAL MATCH (d)-[:HAS_FIELD]->(:Field)<-[c:COLUMN_FEEDS]-(:Field)<-[:HAS_FIELD]-(src:Dataset) WHERE c.validTo > $now
  WITH DISTINCT src, c.jobKey AS jk LIMIT `+itoa(maxColumnSources)+`
  OPTIONAL MATCH (cj:Job {key: jk})
  RETURN collect(CASE WHEN src IS NULL THEN null ELSE {k: src.key, ns: src.namespace, n: src.name,
    j: cj{.key, .namespace, .name}} END) AS sources
}
RETURN d.key AS k, d.namespace AS ns, d.name AS n, writers, sources ORDER BY ns, n`, p)
	if err != nil {
		return nil, err
	}
	out := make([]DatasetRow, len(rows))
	for i, r := range rows {
		out[i] = DatasetRow{Key: r.Str("k"), Namespace: r.Str("ns"), Name: r.Str("n")}
		for _, w := range r.List("writers") {
			out[i].Writers = append(out[i].Writers, reportedJob(w))
		}
		for _, c := range r.List("sources") {
			out[i].ColumnSources = append(out[i].ColumnSources, ColumnSource{DatasetKey: c.Str("k"),
				DatasetNamespace: c.Str("ns"), DatasetName: c.Str("n"), Job: reportedJob(c.Sub("j"))})
		}
	}
	return out, nil
}

// Unresolved reads the unresolved identities last seen at or after from.
func (s *Store) Unresolved(ctx context.Context, f Filter, from int64) ([]UnresolvedRow, error) {
	p := filterParams(f)
	p["from"] = from
	rows, err := s.read(ctx, `MATCH (u:UnresolvedIdentity) WHERE u.lastSeenAt >= $from AND ($ns = '' OR u.namespace = $ns)
RETURN u.namespace AS ns, u.name AS n, u.reason AS reason, u.lastSeenAt AS last ORDER BY ns, n, reason
LIMIT `+itoa(MaxItemsKept), p)
	if err != nil {
		return nil, err
	}
	out := make([]UnresolvedRow, len(rows))
	for i, r := range rows {
		out[i] = UnresolvedRow{Namespace: r.Str("ns"), Name: r.Str("n"), Reason: r.Str("reason"), LastSeenAt: r.Int("last")}
	}
	return out, nil
}

// Activity reads, per producer principal, the distinct minutes with events received since from, the events of
// each and the latest receive time (one producer, or all for ""). Without an index on Event.receivedAt this is
// a scan of the Event label (the "migration:" commit adds the index).
func (s *Store) Activity(ctx context.Context, producer string, from int64) ([]ActivityRow, error) {
	rows, err := s.read(ctx, `MATCH (e:Event) WHERE e.receivedAt >= $from AND e.principal IS NOT NULL
  AND ($p = '' OR e.principal = $p)
WITH e.principal AS p, e.receivedAt / 60000 AS m, count(*) AS n, max(e.receivedAt) AS last
ORDER BY p, m
RETURN p, collect(m) AS minutes, collect(n) AS counts, max(last) AS last ORDER BY p`,
		map[string]any{"p": producer, "from": from})
	if err != nil {
		return nil, err
	}
	out := make([]ActivityRow, len(rows))
	for i, r := range rows {
		out[i] = ActivityRow{Producer: r.Str("p"), Minutes: r.Ints("minutes"), Counts: r.Ints("counts"), Last: r.Int("last")}
	}
	return out, nil
}

// Rejections counts quarantined events received since from per producer principal and rule.
func (s *Store) Rejections(ctx context.Context, producer string, from int64) ([]RejectRow, error) {
	rows, err := s.read(ctx, `MATCH (q:Quarantined) WHERE q.receivedAt >= $from AND ($p = '' OR q.principal = $p)
RETURN coalesce(q.principal, '') AS p, coalesce(q.rule, 'unspecified') AS rule, count(*) AS n, max(q.receivedAt) AS last
ORDER BY p, rule`, map[string]any{"p": producer, "from": from})
	if err != nil {
		return nil, err
	}
	out := make([]RejectRow, len(rows))
	for i, r := range rows {
		out[i] = RejectRow{Producer: r.Str("p"), Rule: r.Str("rule"), Count: r.Int("n"), Last: r.Int("last")}
	}
	return out, nil
}

func itoa(n int) string { return fmt.Sprint(n) }

// Samples reads the trend points of one signal since from, oldest first.
func (s *Store) Samples(ctx context.Context, sig Signal, from int64) ([]Point, error) {
	rows, err := s.read(ctx, `MATCH (x:`+LabelSample+`) WHERE x.signal = $sig AND x.at >= $from
RETURN x.at AS at, x.numerator AS n, x.denominator AS d ORDER BY at LIMIT 10000`,
		map[string]any{"sig": string(sig), "from": from})
	if err != nil {
		return nil, err
	}
	out := make([]Point, len(rows))
	for i, p := range rows {
		out[i] = Point{At: fromMs(p.Int("at")), Numerator: int(p.Int("n")), Denominator: int(p.Int("d"))}
	}
	return out, nil
}

// StoreSamples writes trend points ({key, signal, at, num, den}) and deletes those older than before.
func (s *Store) StoreSamples(ctx context.Context, points []map[string]any, before int64) error {
	_, err := neo4j.ExecuteQuery(ctx, s.g.Driver, `UNWIND $points AS p
MERGE (x:`+LabelSample+` {key: p.key}) SET x.signal = p.signal, x.at = p.at, x.numerator = p.num, x.denominator = p.den
WITH count(*) AS written
MATCH (old:`+LabelSample+`) WHERE old.at < $before DETACH DELETE old`,
		map[string]any{"points": points, "before": before}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database))
	return err
}
