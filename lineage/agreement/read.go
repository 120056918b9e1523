package agreement

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/lineage"
)

// TestRuns is how many of the latest runs of each test job are read for assertions.
const TestRuns = 20

// RecordReader runs one read query (graph.Store).
type RecordReader interface {
	ReadRecords(ctx context.Context, cypher string, params map[string]any) ([]map[string]any, error)
}

// Visibility says which datasets and jobs the caller may see (catalog.Catalog: one batched check each).
type Visibility interface {
	DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*api.Dataset, error)
	JobsByKeys(ctx context.Context, keys []string) (map[string]*api.Job, error)
}

// Checker compares candidates with the graph for the caller in the context.
type Checker struct {
	rr    RecordReader
	vis   Visibility
	cfg   Config
	clock func() time.Time
}

// NewChecker returns a checker; a zero StaleMin or StaleFactor takes the lineage default.
func NewChecker(rr RecordReader, vis Visibility, cfg Config, clock func() time.Time) *Checker {
	if cfg.StaleMin == 0 {
		cfg.StaleMin = lineage.DefaultStaleMin
	}
	if cfg.StaleFactor == 0 {
		cfg.StaleFactor = lineage.DefaultStaleFactor
	}
	return &Checker{rr: rr, vis: vis, cfg: cfg, clock: clock}
}

// legsQ reads the node jobs of the job namespace with every lineage leg (both kinds), the observed legs'
// evidence read through the job (graph.EvidenceCypher's rule).
const legsQ = `
MATCH (j:Job {namespace: $ns}) WHERE j.dbtRole = 'NODE' AND j.dbtUniqueId IN $ids
OPTIONAL MATCH (d:Dataset)-[r:INPUT_TO]->(j)
WITH j, collect(CASE WHEN d IS NULL THEN null ELSE {key: d.key, ns: d.namespace, name: d.name, kind: r.kind,
  validTo: r.validTo, last: coalesce(r.lastObservedAt, j.evLastObservedAt)} END) AS ins
OPTIONAL MATCH (j)-[w:OUTPUT_TO]->(o:Dataset)
WITH j, ins, collect(CASE WHEN o IS NULL THEN null ELSE {key: o.key, ns: o.namespace, name: o.name, kind: w.kind,
  validTo: w.validTo, last: coalesce(w.lastObservedAt, j.evLastObservedAt)} END) AS outs
RETURN j.key AS key, j.name AS name, j.dbtUniqueId AS uid, j.firstSeenAt AS fs, j.lastSeenAt AS ls, j.runs AS runs,
  ins, outs`

// testsQ reads the latest runs of the test jobs of the nodes (role TESTS, keyed by the node) and of the tests'
// own jobs (role NODE, keyed by the test), with the assertions dbt-ol put on what they read.
const testsQ = `
MATCH (j:Job {namespace: $ns})
WHERE (j.dbtRole = 'TESTS' AND j.dbtUniqueId IN $nodes) OR (j.dbtRole = 'NODE' AND j.dbtUniqueId IN $tests)
CALL {
  WITH j
  MATCH (r:Run)-[:OF_JOB]->(j)
  RETURN r ORDER BY r.lastEventTime DESC LIMIT $runs
}
OPTIONAL MATCH (r)-[x:READ]->(:Dataset) WHERE x.facets CONTAINS 'dataQualityAssertions'
RETURN j.key AS key, j.dbtUniqueId AS uid, j.dbtRole AS role, collect(x.facets) AS facets`

// Check compares the candidate nodes with the graph: the jobs of the job namespace dbt-ol reports them under,
// their legs and their tests' runs, as the caller may see them.
func (c *Checker) Check(ctx context.Context, jobNS string, nodes []declare.DeclaredNode) (*api.DeclaredVersusObserved, error) {
	now := c.clock()
	ids, testIDs := make([]string, 0, len(nodes)), []string{}
	owner := map[string]string{} // test unique id -> node unique id
	for _, n := range nodes {
		ids = append(ids, n.UniqueID)
		for _, t := range n.Tests {
			testIDs = append(testIDs, t.UniqueID)
			owner[t.UniqueID] = n.UniqueID
		}
	}
	rows, err := c.rr.ReadRecords(ctx, legsQ, map[string]any{"ns": jobNS, "ids": ids})
	if err != nil {
		return nil, api.StoreErr(err)
	}
	jobs := map[string]*Job{}
	var jobKeys, dsKeys []string
	for _, row := range rows {
		p := graph.Props(row)
		j := &Job{Key: p.Str("key"), Name: p.Str("name"), UniqueID: p.Str("uid"), FirstSeenAt: p.Int("fs"), LastSeenAt: p.Int("ls"), Runs: p.Int("runs")}
		for dir, list := range map[string][]graph.Props{api.LegInput: p.List("ins"), api.LegOutput: p.List("outs")} {
			for _, l := range list {
				j.Legs = append(j.Legs, Leg{DatasetKey: l.Str("key"), Namespace: l.Str("ns"), Name: l.Str("name"), Direction: dir,
					Kind: l.Str("kind"), ValidTo: l.Int("validTo"), LastObservedAt: l.Int("last")})
				dsKeys = append(dsKeys, l.Str("key"))
			}
		}
		jobs[j.UniqueID] = j
		jobKeys = append(jobKeys, j.Key)
	}
	var tests map[string]*Tests
	var testJobs map[string][]string // node unique id -> its test jobs' keys
	if len(testIDs) > 0 && len(jobs) > 0 {
		if tests, testJobs, err = c.tests(ctx, jobNS, ids, testIDs, owner); err != nil {
			return nil, err
		}
		for _, ks := range testJobs {
			jobKeys = append(jobKeys, ks...)
		}
		for _, n := range nodes {
			if len(n.Tests) > 0 && jobs[n.UniqueID] != nil && tests[n.UniqueID] == nil {
				tests[n.UniqueID] = &Tests{} // no test run at all: checked, never observed
			}
		}
	}
	filtered, err := c.visible(ctx, jobs, tests, testJobs, jobKeys, dsKeys, now)
	if err != nil {
		return nil, err
	}
	out := Compare(nodes, jobs, tests, now, c.cfg)
	out.PermissionsFiltered = filtered
	return out, nil
}

// tests reads the test runs of the nodes: per node, the assertions and the tests whose own job ran, and the
// keys of the test jobs (for the visibility check).
func (c *Checker) tests(ctx context.Context, jobNS string, ids, testIDs []string, owner map[string]string) (map[string]*Tests, map[string][]string, error) {
	rows, err := c.rr.ReadRecords(ctx, testsQ, map[string]any{"ns": jobNS, "nodes": ids, "tests": testIDs, "runs": TestRuns})
	if err != nil {
		return nil, nil, api.StoreErr(err)
	}
	tests, keys := map[string]*Tests{}, map[string][]string{}
	for _, row := range rows {
		p := graph.Props(row)
		node := p.Str("uid")
		if p.Str("role") == graph.DbtRoleNode {
			node = owner[p.Str("uid")]
		}
		ts := tests[node]
		if ts == nil {
			ts = &Tests{Ran: map[string]bool{}}
			tests[node] = ts
		}
		keys[node] = append(keys[node], p.Str("key"))
		if p.Str("role") == graph.DbtRoleNode {
			ts.Ran[p.Str("uid")] = true
		}
		for _, f := range p.Strs("facets") {
			as, err := assertionsOf(f)
			if err != nil {
				return nil, nil, api.StoreErr(fmt.Errorf("test run facets of %s: %w", p.Str("key"), err))
			}
			ts.Assertions = append(ts.Assertions, as...)
		}
	}
	return tests, keys, nil
}

// assertionsOf reads the dataQualityAssertions facet of a READ's facets (JSON).
func assertionsOf(facets string) ([]Assertion, error) {
	var f struct {
		DQ struct {
			Assertions []Assertion `json:"assertions"`
		} `json:"dataQualityAssertions"`
	}
	if err := json.Unmarshal([]byte(facets), &f); err != nil {
		return nil, err
	}
	return f.DQ.Assertions, nil
}

// visible drops what the caller may not see (in place): a node whose job or relation (an output) is hidden, a
// leg on a hidden dataset,
// the tests of a node one of whose test jobs is hidden. It reports whether anything was dropped.
func (c *Checker) visible(ctx context.Context, jobs map[string]*Job, tests map[string]*Tests, testJobs map[string][]string,
	jobKeys, dsKeys []string, now time.Time) (bool, error) {
	if len(jobs) == 0 {
		return false, nil
	}
	seen, err := c.vis.JobsByKeys(ctx, jobKeys)
	if err != nil {
		return false, err
	}
	slices.Sort(dsKeys)
	dss, err := c.vis.DatasetsByKeys(ctx, slices.Compact(dsKeys), now)
	if err != nil {
		return false, err
	}
	filtered := false
	for uid, j := range jobs {
		if seen[j.Key] == nil || slices.ContainsFunc(j.Legs, func(l Leg) bool { return l.Direction == api.LegOutput && dss[l.DatasetKey] == nil }) {
			delete(jobs, uid) // the node is named by its job and its relation: either hidden, it is named nowhere
			filtered = true
			continue
		}
		j.Legs = slices.DeleteFunc(j.Legs, func(l Leg) bool {
			hidden := dss[l.DatasetKey] == nil
			filtered = filtered || hidden
			return hidden
		})
	}
	for uid, ks := range testJobs {
		if slices.ContainsFunc(ks, func(k string) bool { return seen[k] == nil }) {
			delete(tests, uid)
			filtered = true
		}
	}
	return filtered, nil
}
