package truststore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/trust"
)

// Bounds of one dataset's row: a dataset counts as written, and as having column lineage, when one of these the
// caller may see says so (so a dataset whose first sources are all hidden can be under-reported, never leaked).
const (
	maxWriters       = 20
	maxColumnSources = 50
)

// Store reads the signals from Neo4j.
type Store struct{ g *graph.Store }

var _ trust.Reader = (*Store)(nil)

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

func filterParams(f trust.Filter) map[string]any {
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
func (s *Store) ExpectedJobs(ctx context.Context, f trust.Filter) ([]trust.ExpectedRow, error) {
	rows, err := s.read(ctx, `MATCH (e:ExpectedJob)
WHERE e.retiredAt IS NULL AND ($ns = '' OR e.namespace = $ns) AND ($crit = '' OR e.criticality = $crit)
RETURN `+expectedProps+` AS e ORDER BY e.namespace, e.name, e.source`, filterParams(f))
	if err != nil {
		return nil, err
	}
	return expectedRows(rows), nil
}

// JobsNamed reads the jobs named by (namespace, name) pairs (one index seek each).
func (s *Store) JobsNamed(ctx context.Context, names [][2]string) ([]trust.ReportedJob, error) {
	pairs := make([]any, len(names))
	for i, n := range names {
		pairs[i] = []any{n[0], n[1]}
	}
	rows, err := s.read(ctx, `UNWIND $pairs AS p MATCH (j:Job {namespace: p[0], name: p[1]})
RETURN j{.key, .namespace, .name, .lastSeenAt, .dbtUniqueId, .dbtRole, .names} AS j`, map[string]any{"pairs": pairs})
	if err != nil {
		return nil, err
	}
	out := make([]trust.ReportedJob, len(rows))
	for i, r := range rows {
		out[i] = reportedJob(r.Sub("j"))
	}
	return out, nil
}

// ExpectedWritersOf reads the active expected jobs that list one of outputs ("namespace|name", canonical) as an
// expected output, with their matches.
func (s *Store) ExpectedWritersOf(ctx context.Context, outputs []string) ([]trust.ExpectedRow, error) {
	rows, err := s.read(ctx, `MATCH (e:ExpectedJob)
WHERE e.retiredAt IS NULL AND any(o IN e.outputs WHERE o IN $outs)`+expectedReturn, map[string]any{"outs": outputs})
	if err != nil {
		return nil, err
	}
	return expectedRows(rows), nil
}

func expectedRows(rows []graph.Props) []trust.ExpectedRow {
	out := make([]trust.ExpectedRow, len(rows))
	for i, r := range rows {
		e := r.Sub("e")
		out[i] = trust.ExpectedRow{Key: e.Str("key"), Source: e.Str("source"), Namespace: e.Str("namespace"),
			Name: e.Str("name"), Type: e.Str("type"), Criticality: e.Str("criticality"), Owner: e.Str("owner"),
			Schedule: e.Str("schedule"), DbtUniqueID: e.Str("dbtUniqueId"), IntervalMs: e.Int("intervalMs"),
			Paused: e.Bool("paused"), Outputs: e.Strs("outputs"), MatchNames: e.Strs("matchNames"), DbtMatches: e.Strs("dbtMatches")}
		for _, j := range r.List("jobs") {
			out[i].Matched = append(out[i].Matched, reportedJob(j))
		}
	}
	return out
}

func reportedJob(j graph.Props) trust.ReportedJob {
	return trust.ReportedJob{Key: j.Str("key"), Namespace: j.Str("namespace"), Name: j.Str("name"),
		LastSeenAt: j.Int("lastSeenAt"), DbtUniqueID: j.Str("dbtUniqueId"), DbtRole: j.Str("dbtRole"), Names: j.Strs("names")}
}

// DbtJobs reads the dbt node jobs (ADR 0027: dbtUniqueId, dbtRole and names, set by the projector from the
// dbt_node facet), in one namespace or all.
func (s *Store) DbtJobs(ctx context.Context, namespace string) ([]trust.ReportedJob, error) {
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns) AND j.dbtUniqueId IS NOT NULL
RETURN j{.key, .namespace, .name, .lastSeenAt, .dbtUniqueId, .dbtRole, .names} AS j`, map[string]any{"ns": namespace})
	if err != nil {
		return nil, err
	}
	out := make([]trust.ReportedJob, len(rows))
	for i, r := range rows {
		out[i] = reportedJob(r.Sub("j"))
	}
	return out, nil
}

// Runs counts, per job, the runs whose first event is at or after from, and lists those still in START or
// RUNNING that started before cutoff (batch jobs only: streaming and service jobs have no terminal event).
func (s *Store) Runs(ctx context.Context, f trust.Filter, from, cutoff int64) ([]trust.JobRuns, error) {
	p := filterParams(f)
	p["from"], p["cutoff"] = from, cutoff
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns)
  AND NOT coalesce(j.processingType, '') IN ['STREAMING', 'SERVICE']
MATCH (r:Run {jobKey: j.key}) WHERE r.firstEventAt >= $from
WITH j, count(r) AS started,
  collect(CASE WHEN r.state IN ['START', 'RUNNING'] AND coalesce(r.startedAt, r.firstEventAt) < $cutoff
    THEN r{.key, .runId, .state, startedAt: coalesce(r.startedAt, r.firstEventAt)} END)[..`+itoa(trust.MaxItemsKept)+`] AS open
RETURN j{.key, .namespace, .name, .lastSeenAt} AS j, started, open`, p)
	if err != nil {
		return nil, err
	}
	out := make([]trust.JobRuns, len(rows))
	for i, r := range rows {
		out[i] = trust.JobRuns{Job: reportedJob(r.Sub("j")), Started: r.Int("started")}
		for _, o := range r.List("open") {
			out[i].Open = append(out[i].Open, trust.OpenRun{Key: o.Str("key"), RunID: o.Str("runId"), State: o.Str("state"),
				StartedAt: o.Int("startedAt")})
		}
	}
	return out, nil
}

// Edges reads the current OBSERVED relationships of jobs (INPUT_TO and OUTPUT_TO) with what the staleness rule
// needs.
func (s *Store) Edges(ctx context.Context, f trust.Filter, now int64) ([]trust.EdgeRow, error) {
	p := filterParams(f)
	p["now"] = now
	rows, err := s.read(ctx, `MATCH (j:Job) WHERE ($ns = '' OR j.namespace = $ns)
WITH j, COUNT { (j)<-[:OF_JOB]-() } AS runs
MATCH (j)-[e:OUTPUT_TO|INPUT_TO]-(d:Dataset) WHERE e.kind = 'OBSERVED' AND e.validTo > $now
RETURN j{.key, .namespace, .name, .lastSeenAt} AS j, j.firstSeenAt AS first, runs, d.key AS dk, d.namespace AS dns,
  d.name AS dn, type(e) AS dir, coalesce(e.lastObservedAt, j.evLastObservedAt) AS last`, p)
	if err != nil {
		return nil, err
	}
	out := make([]trust.EdgeRow, len(rows))
	for i, r := range rows {
		out[i] = trust.EdgeRow{Job: reportedJob(r.Sub("j")), FirstSeenAt: r.Int("first"), Runs: r.Int("runs"),
			DatasetKey: r.Str("dk"), DatasetNamespace: r.Str("dns"), DatasetName: r.Str("dn"), Direction: r.Str("dir"),
			LastObservedAt: r.Int("last")}
	}
	return out, nil
}

// WrittenDatasets reads the datasets (of the namespace) some job currently writes (an OBSERVED OUTPUT_TO in
// force) with their writers and the sources of their column lineage in force.
func (s *Store) WrittenDatasets(ctx context.Context, f trust.Filter, now int64) ([]trust.DatasetRow, error) {
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
	out := make([]trust.DatasetRow, len(rows))
	for i, r := range rows {
		out[i] = trust.DatasetRow{Key: r.Str("k"), Namespace: r.Str("ns"), Name: r.Str("n")}
		for _, w := range r.List("writers") {
			out[i].Writers = append(out[i].Writers, reportedJob(w))
		}
		for _, c := range r.List("sources") {
			out[i].ColumnSources = append(out[i].ColumnSources, trust.ColumnSource{DatasetKey: c.Str("k"),
				DatasetNamespace: c.Str("ns"), DatasetName: c.Str("n"), Job: reportedJob(c.Sub("j"))})
		}
	}
	return out, nil
}

// Unresolved reads the unresolved identities last seen at or after from.
func (s *Store) Unresolved(ctx context.Context, f trust.Filter, from int64) ([]trust.UnresolvedRow, error) {
	p := filterParams(f)
	p["from"] = from
	rows, err := s.read(ctx, `MATCH (u:UnresolvedIdentity) WHERE u.lastSeenAt >= $from AND ($ns = '' OR u.namespace = $ns)
RETURN u.namespace AS ns, u.name AS n, u.reason AS reason, u.lastSeenAt AS last ORDER BY ns, n, reason
LIMIT `+itoa(trust.MaxItemsKept), p)
	if err != nil {
		return nil, err
	}
	out := make([]trust.UnresolvedRow, len(rows))
	for i, r := range rows {
		out[i] = trust.UnresolvedRow{Namespace: r.Str("ns"), Name: r.Str("n"), Reason: r.Str("reason"), LastSeenAt: r.Int("last")}
	}
	return out, nil
}

// Activity reads, per producer principal, the distinct minutes with events received since from, the events of
// each and the latest receive time (one producer, or all for ""). Without an index on Event.receivedAt this is
// a scan of the Event label (the "migration:" commit adds the index).
func (s *Store) Activity(ctx context.Context, producer string, from int64) ([]trust.ActivityRow, error) {
	rows, err := s.read(ctx, `MATCH (e:Event) WHERE e.receivedAt >= $from AND e.principal IS NOT NULL
  AND ($p = '' OR e.principal = $p)
WITH e.principal AS p, e.receivedAt / 60000 AS m, count(*) AS n, max(e.receivedAt) AS last
ORDER BY p, m
RETURN p, collect(m) AS minutes, collect(n) AS counts, max(last) AS last ORDER BY p`,
		map[string]any{"p": producer, "from": from})
	if err != nil {
		return nil, err
	}
	out := make([]trust.ActivityRow, len(rows))
	for i, r := range rows {
		out[i] = trust.ActivityRow{Producer: r.Str("p"), Minutes: r.Ints("minutes"), Counts: r.Ints("counts"), Last: r.Int("last")}
	}
	return out, nil
}

// Rejections counts quarantined events received since from per producer principal and rule.
func (s *Store) Rejections(ctx context.Context, producer string, from int64) ([]trust.RejectRow, error) {
	rows, err := s.read(ctx, `MATCH (q:Quarantined) WHERE q.receivedAt >= $from AND ($p = '' OR q.principal = $p)
RETURN coalesce(q.principal, '') AS p, coalesce(q.rule, 'unspecified') AS rule, count(*) AS n, max(q.receivedAt) AS last
ORDER BY p, rule`, map[string]any{"p": producer, "from": from})
	if err != nil {
		return nil, err
	}
	out := make([]trust.RejectRow, len(rows))
	for i, r := range rows {
		out[i] = trust.RejectRow{Producer: r.Str("p"), Rule: r.Str("rule"), Count: r.Int("n"), Last: r.Int("last")}
	}
	return out, nil
}

func itoa(n int) string { return fmt.Sprint(n) }

// Samples reads the trend points of one signal since from, oldest first.
func (s *Store) Samples(ctx context.Context, sig trust.Signal, from int64) ([]trust.Point, error) {
	rows, err := s.read(ctx, `MATCH (x:`+trust.LabelSample+`) WHERE x.signal = $sig AND x.at >= $from
RETURN x.at AS at, x.numerator AS n, x.denominator AS d ORDER BY at LIMIT 10000`,
		map[string]any{"sig": string(sig), "from": from})
	if err != nil {
		return nil, err
	}
	return points(rows), nil
}

// StoreSamples writes trend points ({key, signal, at, num, den}) and deletes those older than before.
func (s *Store) StoreSamples(ctx context.Context, points []map[string]any, before int64) error {
	_, err := neo4j.ExecuteQuery(ctx, s.g.Driver, `UNWIND $points AS p
MERGE (x:`+trust.LabelSample+` {key: p.key}) SET x.signal = p.signal, x.at = p.at, x.numerator = p.num, x.denominator = p.den
WITH count(*) AS written
MATCH (old:`+trust.LabelSample+`) WHERE old.at < $before DETACH DELETE old`,
		map[string]any{"points": points, "before": before}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database))
	return err
}

// ScopeSamples reads one scope's trend points of one signal since from, oldest first: the inside-only values
// when inside (points without them are not returned).
func (s *Store) ScopeSamples(ctx context.Context, scope string, sig trust.Signal, from int64, inside bool) ([]trust.Point, error) {
	num, den := "x.numerator", "x.denominator"
	if inside {
		num, den = "x.insideNumerator", "x.insideDenominator"
	}
	rows, err := s.read(ctx, `MATCH (x:`+trust.LabelScopeSample+`) WHERE x.scope = $scope AND x.signal = $sig AND x.at >= $from
  AND `+num+` IS NOT NULL
RETURN x.at AS at, `+num+` AS n, `+den+` AS d ORDER BY at LIMIT 10000`,
		map[string]any{"scope": scope, "sig": string(sig), "from": from})
	if err != nil {
		return nil, err
	}
	return points(rows), nil
}

// StoreScopeSamples writes scoped trend points ({key, scope, signal, at, num, den, inNum, inDen}; the inside
// values may be null) and deletes scoped points older than before.
func (s *Store) StoreScopeSamples(ctx context.Context, points []map[string]any, before int64) error {
	_, err := neo4j.ExecuteQuery(ctx, s.g.Driver, `UNWIND $points AS p
MERGE (x:`+trust.LabelScopeSample+` {key: p.key}) SET x.scope = p.scope, x.signal = p.signal, x.at = p.at,
  x.numerator = p.num, x.denominator = p.den, x.insideNumerator = p.inNum, x.insideDenominator = p.inDen
WITH count(*) AS written
MATCH (old:`+trust.LabelScopeSample+`) WHERE old.at < $before DETACH DELETE old`,
		map[string]any{"points": points, "before": before}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.g.Database))
	return err
}

// points converts rows of (at, n, d) to trend points.
func points(rows []graph.Props) []trust.Point {
	out := make([]trust.Point, len(rows))
	for i, p := range rows {
		out[i] = trust.Point{At: fromMs(p.Int("at")), Numerator: int(p.Int("n")), Denominator: int(p.Int("d"))}
	}
	return out
}

// fromMs is trust's: epoch ms to UTC time, 0 to the zero time.
func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
