package project

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// jobMetaFields are the descriptive Job properties, each taken from the latest event (by eventTime, then
// eventId) that carries a non-empty value, so arrival order does not matter.
var jobMetaFields = []string{"processingType", "jobType", "integration", "description", jobTagsField}

func jobMetaValue(j *jobRec, field string) string {
	switch field {
	case "processingType":
		return j.ProcessingType
	case "jobType":
		return j.JobType
	case "integration":
		return j.Integration
	case jobTagsField:
		return j.Tags
	default:
		return j.Description
	}
}

// jobBatch is what a batch says about one job.
type jobBatch struct {
	job         *jobRec
	first, last int64
	meta        map[string]jobStamp
	names       map[string]bool    // a dbt node job's reported names (ADR 0027)
	tags        []fold.JobTagEntry // the batch's job tags facets (jobtags.go)
}

// jobStamp is the (eventTime, event id digest) of the event a stamped Job property was taken from, and its value.
// Stored inline beside the property as two numbers (stampT_<field>, stampE_<field>; docs/adr/0035): the latest
// stamp wins, so arrival order does not matter.
type jobStamp struct {
	T, E int64
	V    string
}

func (s jobStamp) newer(o jobStamp) bool { return s.T > o.T || (s.T == o.T && s.E > o.E) }

func setJobStamp(m map[string]jobStamp, k string, s jobStamp) {
	if old, ok := m[k]; !ok || s.newer(old) {
		m[k] = s
	}
}

// stampFields are the stamped Job properties.
var stampFields = append([]string{jobNameField}, jobMetaFields...)

// noStamps is the Job properties that clear every stamp (a job restated from its own events).
func noStamps() map[string]any {
	out := make(map[string]any, 2*len(stampFields))
	for _, f := range stampFields {
		out[stampTProp(f)], out[stampEProp(f)] = nil, nil
	}
	return out
}

func stampTProp(f string) string { return "stampT_" + f }
func stampEProp(f string) string { return "stampE_" + f }

// eventDigest is the stamp of event id id: the first 63 bits of its SHA-256, the tie-break between two events of
// one eventTime.
func eventDigest(id string) int64 {
	sum := sha256.Sum256([]byte(id))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 1)
}

// jobNameField is the stamped property holding a dbt node job's current name: the name of its latest event.
const jobNameField = "name"

// upsertJobs MERGEs and locks the Job nodes of the batch: identity on create, first/last seen as min/max, and
// per-field latest descriptive metadata (stamps kept inline, jobStamp). JobEvent definitions become JobVersions.
func (w *txWriter) upsertJobs(recs []*rec) (jobQueue, error) {
	var q jobQueue
	batch := map[string]*jobBatch{}
	for _, r := range recs {
		if r.Job == nil {
			continue
		}
		b := batch[r.Job.Key]
		if b == nil {
			b = &jobBatch{job: r.Job, first: r.Time, last: r.Time, meta: map[string]jobStamp{}}
			batch[r.Job.Key] = b
		}
		b.first, b.last = min(b.first, r.Time), max(b.last, r.Time)
		if r.Job.DbtRole != "" {
			if b.names == nil {
				b.names = map[string]bool{}
			}
			b.names[r.Job.Name] = true
			setJobStamp(b.meta, jobNameField, jobStamp{T: r.Time, E: eventDigest(r.ID), V: r.Job.Name})
		}
		for _, f := range jobMetaFields {
			if v := jobMetaValue(r.Job, f); v != "" {
				setJobStamp(b.meta, f, jobStamp{T: r.Time, E: eventDigest(r.ID), V: v})
			}
		}
		if e, ok := jobTagEntry(r); ok {
			b.tags = append(b.tags, e)
		}
	}
	if len(batch) == 0 {
		return q, nil
	}
	keys := ordered.Keys(boolKeys(batch))
	stamps, err := w.lockJobMeta(keys, batch)
	if err != nil {
		return q, err
	}
	rows := make([]any, 0, len(keys))
	for _, k := range keys {
		props := mergeJobMeta(stamps[k].stamps, batch[k].meta)
		if err := jobTagProps(stamps[k].tagLog, batch[k].tags, props); err != nil {
			return q, fmt.Errorf("job %s: %w", k, err)
		}
		if names := batch[k].names; names != nil {
			for _, n := range stamps[k].names {
				names[n] = true
			}
			props["names"] = toAny(ordered.Keys(names))
		}
		rows = append(rows, map[string]any{"key": k, "props": props})
		w.touch(k)
		q.add(k)
	}
	if _, err := w.run(`UNWIND $rows AS row MATCH (j:Job {key: row.key})
		SET j += row.props, j.searchName = toLower(coalesce(row.props.name, j.name))`,
		map[string]any{"rows": rows}); err != nil {
		return q, err
	}
	return q, w.jobEventVersions(recs)
}

// storedJob is what upsertJobs reads back from a locked Job node.
type storedJob struct {
	stamps map[string]jobStamp
	names  []string
	tagLog string // jobTagLogField
}

// lockJobMeta MERGEs the jobs (in key order, taking their write locks), updates identity and first/last seen,
// and returns their metadata stamps and recorded names. A dbt node job's name is its stamped current name
// (upsertJobs), so it is not set here.
func (w *txWriter) lockJobMeta(keys []string, batch map[string]*jobBatch) (map[string]storedJob, error) {
	rows := make([]any, 0, len(keys))
	for _, k := range keys {
		b := batch[k]
		row := map[string]any{"key": k, "ns": b.job.NS, "name": b.job.Name, "first": b.first, "last": b.last,
			"dbt": nil, "role": nil, "tags": len(b.tags) > 0}
		if b.job.DbtRole != "" {
			row["name"], row["dbt"], row["role"] = nil, b.job.DbtUniqueID, b.job.DbtRole
		}
		rows = append(rows, row)
	}
	out, err := w.run(`UNWIND $rows AS row
		MERGE (j:Job {key: row.key})
		SET j.namespace = row.ns, j.name = coalesce(row.name, j.name), j.searchName = toLower(coalesce(row.name, j.name)),
			j.normVersion = $nv, j.dbtUniqueId = row.dbt, j.dbtRole = row.role,
			j.firstSeenAt = CASE WHEN j.firstSeenAt IS NULL OR row.first < j.firstSeenAt THEN row.first ELSE j.firstSeenAt END,
			j.lastSeenAt = CASE WHEN j.lastSeenAt IS NULL OR row.last > j.lastSeenAt THEN row.last ELSE j.lastSeenAt END
		RETURN row.key AS k, [f IN $fields | [j['stampT_' + f], j['stampE_' + f], j[f]]] AS stamps,
			j.metaStamps AS v3, coalesce(j.names, []) AS names, CASE WHEN row.tags THEN j[$tagLog] END AS tagLog`,
		map[string]any{"rows": rows, "nv": NormVersion, "fields": toAny(stampFields), "tagLog": jobTagLogField})
	if err != nil {
		return nil, err
	}
	m := map[string]storedJob{}
	for _, r := range out {
		rm := r.AsMap()
		st, err := storedStamps(rm["stamps"], rm["v3"])
		if err != nil {
			return nil, err
		}
		var names []string
		for _, n := range rm["names"].([]any) {
			names = append(names, asStr(n))
		}
		m[asStr(rm["k"])] = storedJob{stamps: st, names: names, tagLog: asStr(rm["tagLog"])}
	}
	return m, nil
}

// storedStamps decodes a Job's stamps: the inline [stampT, stampE, value] per stampFields, or, on a Job version 3
// wrote, its metaStamps JSON (a job the upgrade has not reached yet).
func storedStamps(inline, v3 any) (map[string]jobStamp, error) {
	st := map[string]jobStamp{}
	if s, ok := v3.(string); ok && s != "" {
		return stampsFromV3(s)
	}
	list, _ := inline.([]any)
	for i, x := range list {
		if i >= len(stampFields) {
			break
		}
		t, _ := x.([]any)
		if len(t) != 3 || t[0] == nil {
			continue
		}
		st[stampFields[i]] = jobStamp{T: asInt(t[0]), E: asInt(t[1]), V: asStr(t[2])}
	}
	return st, nil
}

// stampsFromV3 decodes version 3's metaStamps JSON ({field: {t, e, v}}, v the JSON value).
func stampsFromV3(s string) (map[string]jobStamp, error) {
	var old map[string]stamped
	if err := json.Unmarshal([]byte(s), &old); err != nil {
		return nil, fmt.Errorf("decode job meta stamps: %w", err)
	}
	st := make(map[string]jobStamp, len(old))
	for f, v := range old {
		var val string
		if err := json.Unmarshal(v.V, &val); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", f, err)
		}
		st[f] = jobStamp{T: v.T, E: eventDigest(v.E), V: val}
	}
	return st, nil
}

// mergeJobMeta folds the batch's stamps into the stored ones and returns the properties to set.
func mergeJobMeta(stored, batch map[string]jobStamp) map[string]any {
	for f, v := range batch {
		setJobStamp(stored, f, v)
	}
	props := map[string]any{"metaStamps": nil}
	for f, v := range stored {
		props[f], props[stampTProp(f)], props[stampEProp(f)] = v.V, v.T, v.E
	}
	return props
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
