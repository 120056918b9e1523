package truststore

import (
	"context"

	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
)

// Canaries reads the active canaries with their latest check.
func (s *Store) Canaries(ctx context.Context) ([]trust.CanaryRow, error) {
	rows, err := s.read(ctx, `MATCH (c:Canary) WHERE c.retiredAt IS NULL
RETURN c.key AS name, c.fromNs AS fns, c.fromName AS fn, c.fromField AS ff, c.toNs AS tns, c.toName AS tn,
  c.toField AS tf, c.jobNs AS jns, c.jobName AS jn, c.checkedAt IS NOT NULL AS checked, coalesce(c.ok, false) AS ok,
  c.failingSince AS since, c.checkedAt AS at, c.checks AS checks, c.passes AS passes, c.failure AS failure
ORDER BY name LIMIT `+itoa(trust.MaxItemsKept), nil)
	if err != nil {
		return nil, err
	}
	out := make([]trust.CanaryRow, len(rows))
	for i, r := range rows {
		out[i] = trust.CanaryRow{Name: r.Str("name"), FromNs: r.Str("fns"), FromName: r.Str("fn"), FromField: r.Str("ff"),
			ToNs: r.Str("tns"), ToName: r.Str("tn"), ToField: r.Str("tf"), JobNs: r.Str("jns"), JobName: r.Str("jn"),
			Checked: r.Bool("checked"), OK: r.Bool("ok"), FailingSince: r.Int("since"), CheckedAt: r.Int("at"),
			Checks: r.Int("checks"), Passes: r.Int("passes"), Failure: r.Str("failure")}
	}
	return out, nil
}

// JobProducers reads, per job, the producer principals of its latest run's events (the run with the latest
// first event time, through the index on (jobKey, firstEventAt); its events through the index on runKey).
func (s *Store) JobProducers(ctx context.Context, jobKeys []string) (map[string][]gapsource.JobProducer, error) {
	rows, err := s.read(ctx, `UNWIND $jobs AS jk
CALL (jk) {
  MATCH (r:Run {jobKey: jk}) WHERE r.firstEventAt IS NOT NULL
  RETURN r ORDER BY r.firstEventAt DESC LIMIT 1
}
MATCH (e:Event {runKey: r.key}) WHERE e.principal IS NOT NULL AND e.principal <> ''
RETURN jk, e.principal AS p, max(e.receivedAt) AS last ORDER BY jk, p`, map[string]any{"jobs": jobKeys})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]gapsource.JobProducer, len(rows))
	for _, r := range rows {
		out[r.Str("jk")] = append(out[r.Str("jk")], gapsource.JobProducer{Producer: r.Str("p"), Last: r.Int("last")})
	}
	return out, nil
}

// icebergUUIDScheme is the namespace scheme of a synced table's uuid identifier (icebergsync.UUIDScheme): only
// such a dataset has catalog commits, so the others cost one look at their few names, not a scan of versions.
const icebergUUIDScheme = "iceberg://"

// Commits reads each dataset's latest perDataset catalog commits at or before `before` (ms): DatasetVersions with
// a commit time (the Iceberg snapshots the catalog sync recorded), newest first, each with the jobs of the runs
// whose WROTE names it (through the relationship index on WROTE.datasetVersion, schema version 9).
func (s *Store) Commits(ctx context.Context, datasetKeys []string, before int64, perDataset int) ([]gapsource.Commit, error) {
	rows, err := s.read(ctx, `UNWIND $keys AS k
MATCH (d:Dataset {key: k})
WHERE EXISTS { MATCH (n:DatasetName)-[:NAMES]->(d) WHERE n.namespace STARTS WITH $uuidScheme }
CALL (d) {
  MATCH (v:DatasetVersion)-[:VERSION_OF]->(d) WHERE v.committedAt IS NOT NULL AND v.committedAt <= $before
  RETURN v ORDER BY v.committedAt DESC LIMIT $n
}
OPTIONAL MATCH (r:Run)-[:WROTE {datasetVersion: v.version}]->(d)
OPTIONAL MATCH (j:Job {key: r.jobKey})
WITH k, v, collect(DISTINCT CASE WHEN j IS NULL THEN null ELSE [j.key, j.namespace, j.name] END) AS writers
RETURN k, v.version AS version, v.committedAt AS at, writers ORDER BY k, at DESC`,
		map[string]any{"keys": datasetKeys, "before": before, "n": perDataset, "uuidScheme": icebergUUIDScheme})
	if err != nil {
		return nil, err
	}
	out := make([]gapsource.Commit, len(rows))
	for i, r := range rows {
		c := gapsource.Commit{DatasetKey: r.Str("k"), Version: r.Str("version"), At: r.Int("at")}
		l, _ := r["writers"].([]any)
		for _, w := range l {
			if t, ok := w.([]any); ok && len(t) == 3 {
				key, _ := t[0].(string)
				ns, _ := t[1].(string)
				name, _ := t[2].(string)
				c.Writers = append(c.Writers, trust.JobRef{Key: key, Namespace: ns, Name: name})
			}
		}
		out[i] = c
	}
	return out, nil
}

// CatalogCommits reads the catalog commits (DatasetVersions with a commit time) from `from` to `before` (ms) of
// the filter's tables, grouped per table by the set of jobs whose runs' WROTE names the commit (through the
// indexes on DatasetVersion.committedAt and WROTE.datasetVersion, schema version 9).
func (s *Store) CatalogCommits(ctx context.Context, f trust.Filter, from, before int64) ([]trust.CommitGroup, error) {
	p := filterParams(f)
	p["from"], p["before"] = from, before
	rows, err := s.read(ctx, `MATCH (v:DatasetVersion) WHERE v.committedAt >= $from AND v.committedAt <= $before
MATCH (v)-[:VERSION_OF]->(d:Dataset) WHERE ($ns = '' OR d.namespace = $ns)
OPTIONAL MATCH (r:Run)-[:WROTE {datasetVersion: v.version}]->(d)
WITH d, v, collect(DISTINCT r.jobKey) AS jks
WITH d, jks, count(v) AS commits, max(v.committedAt) AS latest
CALL (jks) { UNWIND jks AS k MATCH (j:Job {key: k}) RETURN collect(j{.key, .namespace, .name}) AS writers }
RETURN d.key AS k, d.namespace AS ns, d.name AS n, writers, commits, latest ORDER BY ns, n
LIMIT `+itoa(trust.MaxCommitGroups), p)
	if err != nil {
		return nil, err
	}
	out := make([]trust.CommitGroup, len(rows))
	for i, r := range rows {
		out[i] = trust.CommitGroup{Key: r.Str("k"), Namespace: r.Str("ns"), Name: r.Str("n"), Commits: r.Int("commits"), Latest: r.Int("latest")}
		for _, w := range r.List("writers") {
			out[i].Writers = append(out[i].Writers, reportedJob(w))
		}
	}
	return out, nil
}
