package catalogread

import (
	"context"

	"github.com/headwater-data/headwater/graph"
)

// EventStatus looks an event key (graph.EventKey) up among projected (Event) and quarantined (Quarantined) nodes.
func (s *Store) EventStatus(ctx context.Context, id string) (graph.EventStatusRow, error) {
	recs, err := s.ReadRecords(ctx, `OPTIONAL MATCH (e:Event {key: $id}) OPTIONAL MATCH (q:Quarantined {key: $id})
RETURN properties(e) AS e, properties(q) AS q`, map[string]any{"id": id})
	if err != nil || len(recs) == 0 {
		return graph.EventStatusRow{}, err
	}
	e, q := graph.Props(recs[0]).Sub("e"), graph.Props(recs[0]).Sub("q")
	var out graph.EventStatusRow
	if e != nil {
		out.Projected = true
		out.Event = graph.EventRow{ID: eventIDOf(e), Key: e.Str("key"), RunKey: e.Str("runKey"), Kind: e.Str("kind"), EventType: e.Str("eventType"),
			Producer: e.Str("producer"), EventTime: e.Int("eventTime"), ReceivedAt: e.Int("receivedAt")}
		out.Payload = e["payload"]
	}
	if q != nil {
		out.Quarantined = true
		out.Reason, out.Field, out.Producer, out.ReceivedAt = q.Str("reason"), q.Str("field"), q.Str("producer"), q.Int("receivedAt")
		out.Rule, out.Principal = q.Str("rule"), q.Str("principal")
	}
	return out, nil
}

// UnresolvedNamed returns the unresolved-identity records whose (namespace, name) is one of the given names.
func (s *Store) UnresolvedNamed(ctx context.Context, names []graph.NameRef) ([]graph.UnresolvedRow, error) {
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = map[string]any{"ns": n.Namespace, "name": n.Name}
	}
	recs, err := s.ReadRecords(ctx, `UNWIND $names AS n MATCH (u:UnresolvedIdentity {namespace: n.ns, name: n.name})
RETURN DISTINCT properties(u) AS u ORDER BY u.key`, map[string]any{"names": list})
	if err != nil {
		return nil, err
	}
	out := make([]graph.UnresolvedRow, len(recs))
	for i, r := range recs {
		p := graph.Props(r).Sub("u")
		out[i] = graph.UnresolvedRow{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"),
			Reason: p.Str("reason"), FirstSeenAt: p.Int("firstSeenAt"), LastSeenAt: p.Int("lastSeenAt")}
	}
	return out, nil
}

// searchHits matches datasets and jobs whose current name contains $q, ignoring case: searchName is the name
// lower-cased (toLower, written with every name by projection version 3, ADR 0026), so a user searching
// "orders" finds Snowflake's "ORDERS". A text index on searchName serves the CONTAINS; without it the match is a
// label scan, slower but the same answer.
const searchHits = `CALL () {
  MATCH (d:Dataset) WHERE d.searchName CONTAINS toLower($q) RETURN 'Dataset' AS label, d.key AS key, d.name AS name
  UNION ALL
  MATCH (j:Job) WHERE j.searchName CONTAINS toLower($q) RETURN 'Job' AS label, j.key AS key, j.name AS name
}`

// Search finds datasets and jobs whose current name contains q, ignoring case (searchHits), ordered by name then
// key.
func (s *Store) Search(ctx context.Context, q string, offset, limit int) ([]graph.SearchHit, error) {
	recs, err := s.ReadRecords(ctx, searchHits+`
RETURN label, key, name ORDER BY name, label, key SKIP $off LIMIT $lim`,
		map[string]any{"q": q, "off": offset, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]graph.SearchHit, len(recs))
	for i, r := range recs {
		p := graph.Props(r)
		out[i] = graph.SearchHit{Label: p.Str("label"), Key: p.Str("key"), Name: p.Str("name")}
	}
	return out, nil
}

// JobByName finds a job by its (canonical) namespace and name.
func (s *Store) JobByName(ctx context.Context, namespace, name string) (graph.JobRow, bool, error) {
	// The job keyed by the name (reported without a dbt_node facet) first, then a dbt node job whose current name
	// it is (docs/adr/0027-dbt-job-identity.md).
	recs, err := s.ReadRecords(ctx, `MATCH (j:Job {namespace: $ns, name: $name}) RETURN `+jobProjection+` AS j
ORDER BY j.dbtUniqueId IS NOT NULL, j.key LIMIT $max`, map[string]any{"ns": namespace, "name": name, "max": MaxJobsPerName})
	if err != nil {
		return graph.JobRow{}, false, err
	}
	if len(recs) == 0 {
		// a dbt node job that recorded the name among its names: a seek of the namespace's jobs
		recs, err = s.ReadRecords(ctx, `MATCH (j:Job) WHERE j.namespace = $ns AND j.name IS NOT NULL
AND j.dbtUniqueId IS NOT NULL AND $name IN j.names RETURN `+jobProjection+` AS j ORDER BY j.key LIMIT $max`,
			map[string]any{"ns": namespace, "name": name, "max": MaxJobsPerName})
		if err != nil || len(recs) == 0 {
			return graph.JobRow{}, false, err
		}
	}
	first := jobRowOf(graph.Props(recs[0]).Sub("j"))
	if len(recs) == 1 || first.DbtUniqueID == "" {
		return first, true, nil
	}
	amb := &graph.AmbiguousJobNameError{Namespace: namespace, Name: name}
	for _, r := range recs {
		amb.Jobs = append(amb.Jobs, jobRowOf(graph.Props(r).Sub("j")))
	}
	return first, false, amb
}

// MaxJobsPerName bounds the dbt node jobs JobByName reads for one name (graph.AmbiguousJobNameError.Jobs).
const MaxJobsPerName = 20

// JobByDbtUniqueID returns the job of a dbt node in a job namespace (its key form, normalize.KeyNamespace) in a
// role (graph.DbtRoleNode, graph.DbtRoleTests): one key lookup (docs/adr/0027-dbt-job-identity.md).
func (s *Store) JobByDbtUniqueID(ctx context.Context, namespace, uniqueID, role string) (graph.JobRow, bool, error) {
	k := graph.DbtJobKey(namespace, uniqueID, role)
	rows, err := s.JobsByKeys(ctx, []string{k})
	if err != nil {
		return graph.JobRow{}, false, err
	}
	j, ok := rows[k]
	return j, ok, nil
}

// SearchAfter is Search by position: hits strictly after `after` in (name, label, key) order ("" name: from the
// start), so a caller that filters hits can page without offsets that count what it filtered out.
func (s *Store) SearchAfter(ctx context.Context, q string, after graph.SearchHit, limit int) ([]graph.SearchHit, error) {
	recs, err := s.ReadRecords(ctx, searchHits+`
WITH label, key, name
WHERE $an = '' OR name > $an OR (name = $an AND (label > $al OR (label = $al AND key > $ak)))
RETURN label, key, name ORDER BY name, label, key LIMIT $lim`,
		map[string]any{"q": q, "an": after.Name, "al": after.Label, "ak": after.Key, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]graph.SearchHit, len(recs))
	for i, r := range recs {
		p := graph.Props(r)
		out[i] = graph.SearchHit{Label: p.Str("label"), Key: p.Str("key"), Name: p.Str("name")}
	}
	return out, nil
}
