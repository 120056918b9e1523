package hopread

import (
	"context"
	"encoding/json"

	"github.com/headwater-data/headwater/graph"
)

// Only Run nodes have OF_JOB relationships, so the count leaves the label out: Neo4j then answers it from the
// relationship degree store (constant time) instead of visiting every run of the job (thousands for hourly jobs).
const jobBrief = `j{.key, .namespace, .name, .firstSeenAt, .lastSeenAt, runs: COUNT { (j)<-[:OF_JOB]-() }}`

// edgeRel is the properties of INPUT_TO / OUTPUT_TO rel with its latest evidence read through the job j when it
// keeps none of its own (graph.EvidenceCypher). On a DECLARED_FEEDS (j null) it is its own properties.
func edgeRel(rel string) string { return graph.EvidenceCypher(rel, "j", graph.EdgeEvidenceProps) }

func datasetHopCypher(down bool, limited bool) string {
	// INPUT_TO always ends at a Job and OUTPUT_TO at a Dataset: leaving the labels out of the pattern saves a label
	// check per relationship on hubs.
	through := `(s)-[a:INPUT_TO]->(j)-[b:OUTPUT_TO]->(n)`
	declared := `(s)-[c:DECLARED_FEEDS]->(n:Dataset)`
	if !down {
		through = `(s)<-[b:OUTPUT_TO]-(j)<-[a:INPUT_TO]-(n)`
		declared = `(s)<-[c:DECLARED_FEEDS]-(n:Dataset)`
	}
	throughWhere := `a.validTo > $t AND b.validTo > $t AND ` + graph.InForceCypher("a") + ` AND ` + graph.InForceCypher("b")
	declaredWhere := `c.validTo > $t AND ` + graph.InForceCypher("c")
	tail := `
RETURN k AS src, n.key AS dst, job, inRel, outRel, ` + graph.NameAtCypher("n") + ` AS dstName, n{.namespace, .name, .env} AS dstCurrent`
	if !limited {
		return `UNWIND $keys AS k
MATCH (s:Dataset {key: k})
CALL (s) {
  MATCH ` + through + `
  WHERE ` + throughWhere + `
  RETURN n, ` + jobBrief + ` AS job, ` + edgeRel("a") + ` AS inRel, ` + edgeRel("b") + ` AS outRel
  UNION ALL
  MATCH ` + declared + `
  WHERE ` + declaredWhere + `
  RETURN n, null AS job, null AS inRel, properties(c) AS outRel
}` + tail
	}
	// Limited: find the relationships in force, group them by neighbour, keep the first $limit neighbours in key
	// order, and only then project the relationships, jobs and names (the costly part for a hub).
	return `UNWIND $keys AS k
MATCH (s:Dataset {key: k})
CALL (s) {
  CALL (s) {
    MATCH ` + through + `
    WHERE ` + throughWhere + `
    RETURN n, j, a, b
    UNION ALL
    MATCH ` + declared + `
    WHERE ` + declaredWhere + `
    RETURN n, null AS j, null AS a, c AS b
  }
  WITH n, collect([j, a, b]) AS legs
  ORDER BY n.key
  LIMIT $limit
  UNWIND legs AS leg
  WITH n, leg[0] AS j, leg[1] AS a, leg[2] AS b
  RETURN n, CASE WHEN j IS NULL THEN null ELSE ` + jobBrief + ` END AS job,
    CASE WHEN a IS NULL THEN null ELSE ` + edgeRel("a") + ` END AS inRel, ` + edgeRel("b") + ` AS outRel
}` + tail
}

// DatasetHop reads the dataset neighbours of every frontier dataset, through jobs (both legs) and declared
// dataset-to-dataset lineage, keeping only relationships with an interval in force at AsOf whose publication
// counts. One query for the whole frontier.
func (s *Store) DatasetHop(ctx context.Context, q graph.HopQuery) ([]graph.HopRow, error) {
	recs, err := s.ReadRecords(ctx, datasetHopCypher(q.Down, q.Limit > 0), hopParams(q))
	if err != nil {
		return nil, err
	}
	return datasetRows(recs), nil
}

func datasetRows(recs []map[string]any) []graph.HopRow {
	out := make([]graph.HopRow, 0, len(recs))
	for _, r := range recs {
		p := graph.Props(r)
		out = append(out, graph.HopRow{Src: p.Str("src"), Dst: p.Str("dst"), Job: jobOf(p.Sub("job")),
			In: relOf(p.Sub("inRel")), Out: relOf(p.Sub("outRel")), DstName: graph.NameRefOf(p.Sub("dstName")),
			DstCurrent: graph.NameRefOf(p.Sub("dstCurrent"))})
	}
	return out
}

func jobHopCypher(down bool) string {
	leg := `(j)-[b:OUTPUT_TO]->(n:Dataset)`
	if !down {
		leg = `(j)<-[b:INPUT_TO]-(n:Dataset)`
	}
	return `UNWIND $keys AS k
MATCH (j:Job {key: k})
MATCH ` + leg + `
WHERE b.validTo > $t AND ` + graph.InForceCypher("b") + `
RETURN k AS src, n.key AS dst, ` + jobBrief + ` AS job, ` + edgeRel("b") + ` AS rel, ` + graph.NameAtCypher("n") + ` AS dstName,
  n{.namespace, .name, .env} AS dstCurrent`
}

// JobHop reads the outputs (Down) or inputs of jobs: the first hop when a job is the start node.
func (s *Store) JobHop(ctx context.Context, q graph.HopQuery) ([]graph.HopRow, error) {
	recs, err := s.ReadRecords(ctx, jobHopCypher(q.Down), hopParams(q))
	if err != nil {
		return nil, err
	}
	out := make([]graph.HopRow, 0, len(recs))
	for _, r := range recs {
		p := graph.Props(r)
		row := graph.HopRow{Src: p.Str("src"), Dst: p.Str("dst"), Job: jobOf(p.Sub("job")), DstName: graph.NameRefOf(p.Sub("dstName")),
			DstCurrent: graph.NameRefOf(p.Sub("dstCurrent"))}
		if q.Down {
			row.Out = relOf(p.Sub("rel"))
		} else {
			row.In = relOf(p.Sub("rel"))
		}
		out = append(out, row)
	}
	return out, nil
}

func hopParams(q graph.HopQuery) map[string]any {
	keys := make([]any, len(q.Keys))
	for i, k := range q.Keys {
		keys[i] = k
	}
	pubs := make([]any, len(q.Pubs))
	for i, p := range q.Pubs {
		pubs[i] = p
	}
	return map[string]any{"keys": keys, "t": q.AsOf, "pubs": pubs, "limit": q.Limit}
}

func relOf(p graph.Props) *graph.Rel {
	if p == nil {
		return nil
	}
	return &graph.Rel{Kind: p.Str("kind"), Froms: p.Ints("froms"), Tos: p.Ints("tos"), Pubs: p.Strs("pubs"),
		FirstObservedAt: p.Int("firstObservedAt"), LastObservedAt: p.Int("lastObservedAt"),
		Producer: p.Str("producer"), EventIDs: p.Strs("eventIds"), JobVersion: p.Str("jobVersion"),
		LastRunID: p.Str("lastRunId"), LastRunState: p.Str("lastRunState"), Derivation: p.Str("derivation"),
		JobKey: p.Str("jobKey"), TTypes: p.Strs("tTypes"), TSubtypes: p.Strs("tSubtypes"),
		TMasking: p.Bools("tMasking"), TDescriptions: p.Strs("tDescriptions"),
		THistory: transformHistory(p.Str(graph.ColumnTransformHistoryProp))}
}

// transformHistory decodes a column edge's stored transformation history (nil when it has none; a value that
// does not decode is read as none, the edge then answers its latest run's transformations).
func transformHistory(s string) []graph.TransformationsFrom {
	if s == "" {
		return nil
	}
	var h []graph.TransformationsFrom
	if json.Unmarshal([]byte(s), &h) != nil {
		return nil
	}
	return h
}

func jobOf(p graph.Props) *graph.JobBrief {
	if p == nil {
		return nil
	}
	return &graph.JobBrief{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"),
		FirstSeenAt: p.Int("firstSeenAt"), LastSeenAt: p.Int("lastSeenAt"), Runs: p.Int("runs")}
}
