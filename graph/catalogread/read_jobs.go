package catalogread

import (
	"context"
	"encoding/json"

	"github.com/headwater-data/headwater/graph"
)

const jobProjection = `j{.key, .namespace, .name, .processingType, .jobType, .integration, .description, .firstSeenAt, .lastSeenAt,
.dbtUniqueId, .dbtRole, .names, .jobTags, .jobTagHistory}`

func jobRowOf(p graph.Props) graph.JobRow {
	return graph.JobRow{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"),
		ProcessingType: p.Str("processingType"), JobType: p.Str("jobType"), Integration: p.Str("integration"),
		Description: p.Str("description"), FirstSeenAt: p.Int("firstSeenAt"), LastSeenAt: p.Int("lastSeenAt"),
		DbtUniqueID: p.Str("dbtUniqueId"), DbtRole: p.Str("dbtRole"), Names: p.Strs("names"), Tags: jobTagsOf(p.Str("jobTags")),
		TagHistory: graph.ParseTagHistory(p.Str("jobTagHistory"))}
}

// JobsByKeys reads jobs by key.
func (s *Store) JobsByKeys(ctx context.Context, keys []string) (map[string]graph.JobRow, error) {
	recs, err := s.ReadRecords(ctx, `UNWIND $keys AS k MATCH (j:Job {key: k}) RETURN `+jobProjection+` AS j`,
		map[string]any{"keys": anyList(keys)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.JobRow, len(recs))
	for _, r := range recs {
		row := jobRowOf(graph.Props(r).Sub("j"))
		out[row.Key] = row
	}
	return out, nil
}

func jobVersionOf(p graph.Props) graph.JobVersionRow {
	return graph.JobVersionRow{Key: p.Str("key"), JobKey: p.Str("jobKey"), DefinitionHash: p.Str("definitionHash"),
		SQL: p.Str("sql"), SourceCode: p.Str("sourceCode"), SourceCodeLocation: p.Str("sourceCodeLocation"),
		ValidFrom: p.Int("validFrom"), ValidTo: p.Int("validTo")}
}

// JobVersionsByKeys reads job versions by key.
func (s *Store) JobVersionsByKeys(ctx context.Context, keys []string) (map[string]graph.JobVersionRow, error) {
	recs, err := s.ReadRecords(ctx, `UNWIND $keys AS k MATCH (v:JobVersion {key: k}) RETURN properties(v) AS v`,
		map[string]any{"keys": anyList(keys)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.JobVersionRow, len(recs))
	for _, r := range recs {
		row := jobVersionOf(graph.Props(r).Sub("v"))
		out[row.Key] = row
	}
	return out, nil
}

// JobVersionAt returns the key of the job's version valid at asOf ("" when none).
func (s *Store) JobVersionAt(ctx context.Context, jobKey string, asOf int64) (string, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (:Job {key: $k})-[:HAS_VERSION]->(v:JobVersion)
WHERE v.validFrom <= $t AND $t < v.validTo RETURN v.key AS key ORDER BY v.validFrom DESC LIMIT 1`,
		map[string]any{"k": jobKey, "t": asOf})
	if err != nil || len(recs) == 0 {
		return "", err
	}
	return graph.Props(recs[0]).Str("key"), nil
}

// MaxJobDatasetsChecked bounds the datasets JobDatasets returns per job; a job with more is reported truncated
// (its free text is then withheld from anyone without a global grant: fail closed).
const MaxJobDatasetsChecked = 2000

// JobDatasets lists, per job, the datasets it has ever read or written (current identity; any interval), at
// most MaxJobDatasetsChecked each; truncated names the jobs that have more.
func (s *Store) JobDatasets(ctx context.Context, jobKeys []string) (map[string][]graph.NameRef, map[string]bool, error) {
	recs, err := s.ReadRecords(ctx, `UNWIND $keys AS k
MATCH (j:Job {key: k})
CALL (j) {
  MATCH (d:Dataset)-[:INPUT_TO]->(j) RETURN d
  UNION
  MATCH (j)-[:OUTPUT_TO]->(d:Dataset) RETURN d
}
WITH k, collect(d{.key, .namespace, .name, .env}) AS ds
RETURN k, ds[..$max] AS ds, size(ds) > $max AS truncated`, map[string]any{"keys": anyList(jobKeys), "max": MaxJobDatasetsChecked})
	if err != nil {
		return nil, nil, err
	}
	out, truncated := map[string][]graph.NameRef{}, map[string]bool{}
	for _, r := range recs {
		p := graph.Props(r)
		k := p.Str("k")
		for _, d := range p.List("ds") {
			out[k] = append(out[k], graph.NameRefOf(d))
		}
		truncated[k] = p.Bool("truncated")
	}
	return out, truncated, nil
}

// jobTagsOf decodes Job.jobTags (a JSON list; nil for none or an unreadable one).
func jobTagsOf(s string) []string {
	var out []string
	if s == "" || json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}
