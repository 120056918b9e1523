package catalogread

import (
	"context"

	"github.com/headwater-data/headwater/graph"
)

const runProjection = `r{.key, .runId, .jobKey, .state, .conflictingStates, .startedAt, .endedAt, .parentRunId,
  .rootRunId, .parentKey, .rootKey, .errorMessage, .lastEventTime, .processingType,
  version: [(r)-[:RAN_VERSION]->(v:JobVersion) | v.key][0],
  runIdConflict: r.runId IS NOT NULL AND EXISTS { MATCH (o:Run) WHERE o.key STARTS WITH r.runId + '` + graph.RunKeySep + `'
    AND o.runId = r.runId AND o.key <> r.key AND o.jobKey IS NOT NULL }}`

func runRowOf(p graph.Props) graph.RunRow {
	row := graph.RunRow{Key: p.Str("key"), RunID: p.Str("runId"), JobKey: p.Str("jobKey"), JobVersionKey: p.Str("version"),
		State: p.Str("state"), ParentRunID: p.Str("parentRunId"), RootRunID: p.Str("rootRunId"),
		ParentKey: p.Str("parentKey"), RootKey: p.Str("rootKey"), ErrorMessage: p.Str("errorMessage"),
		ProcessingType: p.Str("processingType"), ConflictingStates: p.Strs("conflictingStates"),
		StartedAt: p.Int("startedAt"), EndedAt: p.Int("endedAt"), LastEventTime: p.Int("lastEventTime"),
		RunIDConflict: p.Bool("runIdConflict")}
	if row.RunID == "" { // a run written before projection version 2: its key is its runId
		row.RunID, _ = graph.SplitRunKey(row.Key)
	}
	return row
}

func (s *Store) runRows(ctx context.Context, cypher string, params map[string]any) ([]graph.RunRow, error) {
	recs, err := s.ReadRecords(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	out := make([]graph.RunRow, len(recs))
	for i, r := range recs {
		out[i] = runRowOf(graph.Props(r).Sub("r"))
	}
	return out, nil
}

// RunsByRunID lists the keys of the runs, of any job, with a runId (a prefix seek on the unique key), and the
// key of a run written before projection version 2 under that bare runId.
func (s *Store) RunsByRunID(ctx context.Context, runID string) ([]string, error) {
	recs, err := s.ReadRecords(ctx, `CALL () {
  MATCH (r:Run) WHERE r.key STARTS WITH $id + $sep AND r.runId = $id RETURN r.key AS key
  UNION MATCH (r:Run {key: $id}) RETURN r.key AS key
} RETURN key ORDER BY key`, map[string]any{"id": runID, "sep": graph.RunKeySep})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = graph.Props(r).Str("key")
	}
	return out, nil
}

// RunsByKeys reads runs by key (graph.RunKey).
func (s *Store) RunsByKeys(ctx context.Context, keys []string) (map[string]graph.RunRow, error) {
	rows, err := s.runRows(ctx, `UNWIND $keys AS k MATCH (r:Run {key: k}) RETURN `+runProjection+` AS r`,
		map[string]any{"keys": anyList(keys)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.RunRow, len(rows))
	for _, r := range rows {
		out[r.Key] = r
	}
	return out, nil
}

// RunsOfJob lists a job's runs, newest start first, optionally of one state, from offset.
func (s *Store) RunsOfJob(ctx context.Context, jobKey, state string, offset, limit int) ([]graph.RunRow, error) {
	return s.runRows(ctx, `MATCH (r:Run {jobKey: $k}) WHERE $state = '' OR r.state = $state
RETURN `+runProjection+` AS r ORDER BY coalesce(r.startedAt, r.lastEventTime) DESC, r.key SKIP $off LIMIT $lim`,
		map[string]any{"k": jobKey, "state": state, "off": offset, "lim": limit})
}

// RunIO lists exactly what a run read and wrote.
func (s *Store) RunIO(ctx context.Context, runKey string) ([]graph.RunIORow, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (r:Run {key: $k})-[x:READ|WROTE]->(d:Dataset)
RETURN type(x) AS rel, d.key AS ds, x.datasetVersion AS v,
  CASE WHEN type(x) = 'READ' THEN `+graph.RunPublicationCypher("r")+` ELSE x.publication END AS pub,
  x.firstAt AS fa, coalesce(x.lastAt, r.ioLastAt) AS la,
  x.scanSnapshotId AS scan, x.scanMatch AS sm, x.reportedVersion AS rv
ORDER BY rel, ds`, map[string]any{"k": runKey})
	if err != nil {
		return nil, err
	}
	out := make([]graph.RunIORow, len(recs))
	for i, r := range recs {
		p := graph.Props(r)
		out[i] = graph.RunIORow{Rel: p.Str("rel"), DatasetKey: p.Str("ds"), DatasetVersion: p.Str("v"),
			Publication: p.Str("pub"), FirstAt: p.Int("fa"), LastAt: p.Int("la"),
			ScanSnapshotID: p.Str("scan"), ScanMatch: p.Str("sm"), ReportedVersion: p.Str("rv")}
	}
	return out, nil
}

// eventIDOf is an Event node's producer event id (a node written before ids were scoped has only its key).
func eventIDOf(p graph.Props) string {
	if id := p.Str("eventId"); id != "" {
		return id
	}
	return p.Str("key")
}

// RunEvents lists a run's projected events in event-time order.
func (s *Store) RunEvents(ctx context.Context, runKey string) ([]graph.EventRow, error) {
	recs, err := s.ReadRecords(ctx, `MATCH (e:Event)-[:OF_RUN]->(:Run {key: $k})
RETURN properties(e) AS e ORDER BY e.eventTime, e.receivedAt, e.key`, map[string]any{"k": runKey})
	if err != nil {
		return nil, err
	}
	out := make([]graph.EventRow, len(recs))
	for i, r := range recs {
		p := graph.Props(r).Sub("e")
		out[i] = graph.EventRow{ID: eventIDOf(p), Key: p.Str("key"), Kind: p.Str("kind"), EventType: p.Str("eventType"),
			Producer: p.Str("producer"), EventTime: p.Int("eventTime"), ReceivedAt: p.Int("receivedAt")}
	}
	return out, nil
}
