package project

import (
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// upsertJobs MERGEs the Job nodes of the batch: identity on create, first/last seen as min/max, and descriptive
// metadata from the latest event (by eventTime, then eventId) that carries it. JobEvent definitions become
// JobVersions.
func (w *txWriter) upsertJobs(recs []*rec) error {
	latest := map[string]*rec{}
	first, last := map[string]int64{}, map[string]int64{}
	for _, r := range recs {
		if r.Job == nil {
			continue
		}
		k := r.Job.Key
		if l, ok := latest[k]; !ok || r.Time > l.Time || (r.Time == l.Time && r.ID > l.ID) {
			latest[k] = r
		}
		if t, ok := first[k]; !ok || r.Time < t {
			first[k] = r.Time
		}
		last[k] = max(last[k], r.Time)
	}
	if len(latest) == 0 {
		return nil
	}
	keys := make([]string, 0, len(latest))
	for k := range latest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([]any, 0, len(keys))
	for _, k := range keys {
		j := latest[k].Job
		meta := map[string]any{"metaAt": latest[k].Time, "metaEvent": latest[k].ID}
		for name, v := range map[string]string{"processingType": j.ProcessingType, "jobType": j.JobType,
			"integration": j.Integration, "description": j.Description} {
			if v != "" {
				meta[name] = v
			}
		}
		rows = append(rows, map[string]any{"key": k, "ns": j.NS, "name": j.Name, "first": first[k],
			"last": last[k], "meta": meta, "t": latest[k].Time, "e": latest[k].ID})
		w.touch(k)
		w.queueJob(k)
	}
	if _, err := w.run(`UNWIND $rows AS row
		MERGE (j:Job {key: row.key})
		SET j.namespace = row.ns, j.name = row.name, j.normVersion = $nv,
			j.firstSeenAt = CASE WHEN j.firstSeenAt IS NULL OR row.first < j.firstSeenAt THEN row.first ELSE j.firstSeenAt END,
			j.lastSeenAt = CASE WHEN j.lastSeenAt IS NULL OR row.last > j.lastSeenAt THEN row.last ELSE j.lastSeenAt END
		WITH j, row
		WHERE j.metaAt IS NULL OR row.t > j.metaAt OR (row.t = j.metaAt AND row.e >= j.metaEvent)
		SET j += row.meta`, map[string]any{"rows": rows, "nv": NormVersion}); err != nil {
		return err
	}
	return w.jobEventVersions(recs)
}

// jobEventVersions records the definitions carried by JobEvents as JobVersions.
func (w *txWriter) jobEventVersions(recs []*rec) error {
	var rows []any
	for _, r := range recs {
		if r.Kind != string(olevent.KindJob) || r.Job.defHash() == "" {
			continue
		}
		j := r.Job
		rows = append(rows, map[string]any{"job": j.Key, "key": graph.JobVersionKey(j.Key, j.defHash()), "t": r.Time,
			"def": map[string]any{"jobKey": j.Key, "definitionHash": j.defHash(), "sql": j.SQL,
				"sourceCode": j.SourceCode, "sourceCodeLocation": j.SourceLocation}})
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := w.run(`UNWIND $rows AS row
		MATCH (j:Job {key: row.job})
		MERGE (v:JobVersion {key: row.key})
			ON CREATE SET v += row.def, v.validFrom = row.t, v.validTo = $open, v.normVersion = $nv
		SET v.validFrom = CASE WHEN row.t < v.validFrom THEN row.t ELSE v.validFrom END
		MERGE (j)-[:HAS_VERSION]->(v)`, map[string]any{"rows": rows, "open": graph.OpenEnd, "nv": NormVersion})
	return err
}

// closeVersions sets each JobVersion's validTo to the validFrom of the next version of the job.
func (w *txWriter) closeVersions(jobs []string) error {
	_, err := w.run(`UNWIND $jobs AS k
		MATCH (:Job {key: k})-[:HAS_VERSION]->(v:JobVersion)
		WITH k, v ORDER BY v.validFrom, v.key
		WITH k, collect(v) AS vs
		UNWIND range(0, size(vs) - 1) AS i
		WITH vs[i] AS v, CASE WHEN i + 1 < size(vs) THEN vs[i + 1].validFrom ELSE $open END AS until
		SET v.validTo = until`, map[string]any{"jobs": toAny(jobs), "open": graph.OpenEnd})
	return err
}
