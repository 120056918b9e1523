package graph

import (
	"context"
	"fmt"
)

// EventStatusRow says what became of an event id.
type EventStatusRow struct {
	Projected   bool
	Quarantined bool
	Event       EventRow
	Reason      string
	Field       string
	Rule        string
	Producer    string
	Principal   string // the principal of the quarantined event
	ReceivedAt  int64
	// Payload is the projected event's stored payload (project.UnresolvedInPayload reads what it lost).
	Payload any
}

// EventStatus looks an event key (EventKey) up among projected (Event) and quarantined (Quarantined) nodes.
func (s *Store) EventStatus(ctx context.Context, id string) (EventStatusRow, error) {
	recs, err := s.readRecords(ctx, `OPTIONAL MATCH (e:Event {key: $id}) OPTIONAL MATCH (q:Quarantined {key: $id})
RETURN properties(e) AS e, properties(q) AS q`, map[string]any{"id": id})
	if err != nil || len(recs) == 0 {
		return EventStatusRow{}, err
	}
	e, q := Props(recs[0]).Sub("e"), Props(recs[0]).Sub("q")
	var out EventStatusRow
	if e != nil {
		out.Projected = true
		out.Event = EventRow{ID: eventIDOf(e), Key: e.Str("key"), RunKey: e.Str("runKey"), Kind: e.Str("kind"), EventType: e.Str("eventType"),
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

// UnresolvedRow is an identifier that could not be bound to one dataset.
type UnresolvedRow struct {
	Key, Namespace, Name, Reason string
	FirstSeenAt, LastSeenAt      int64
}

// UnresolvedNamed returns the unresolved-identity records whose (namespace, name) is one of the given names.
func (s *Store) UnresolvedNamed(ctx context.Context, names []NameRef) ([]UnresolvedRow, error) {
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = map[string]any{"ns": n.Namespace, "name": n.Name}
	}
	recs, err := s.readRecords(ctx, `UNWIND $names AS n MATCH (u:UnresolvedIdentity {namespace: n.ns, name: n.name})
RETURN DISTINCT properties(u) AS u ORDER BY u.key`, map[string]any{"names": list})
	if err != nil {
		return nil, err
	}
	out := make([]UnresolvedRow, len(recs))
	for i, r := range recs {
		p := Props(r).Sub("u")
		out[i] = UnresolvedRow{Key: p.Str("key"), Namespace: p.Str("namespace"), Name: p.Str("name"),
			Reason: p.Str("reason"), FirstSeenAt: p.Int("firstSeenAt"), LastSeenAt: p.Int("lastSeenAt")}
	}
	return out, nil
}

// SearchHit is a dataset or job whose name contains the query (ignoring case).
type SearchHit struct {
	Label string // Dataset or Job
	Key   string
	Name  string
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
func (s *Store) Search(ctx context.Context, q string, offset, limit int) ([]SearchHit, error) {
	recs, err := s.readRecords(ctx, searchHits+`
RETURN label, key, name ORDER BY name, label, key SKIP $off LIMIT $lim`,
		map[string]any{"q": q, "off": offset, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]SearchHit, len(recs))
	for i, r := range recs {
		p := Props(r)
		out[i] = SearchHit{Label: p.Str("label"), Key: p.Str("key"), Name: p.Str("name")}
	}
	return out, nil
}

// JobByName finds a job by its (canonical) namespace and name.
func (s *Store) JobByName(ctx context.Context, namespace, name string) (JobRow, bool, error) {
	// The job keyed by the name (reported without a dbt_node facet) first, then a dbt node job whose current name
	// it is (docs/adr/0027-dbt-job-identity.md).
	recs, err := s.readRecords(ctx, `MATCH (j:Job {namespace: $ns, name: $name}) RETURN `+jobProjection+` AS j
ORDER BY j.dbtUniqueId IS NOT NULL, j.key LIMIT $max`, map[string]any{"ns": namespace, "name": name, "max": MaxJobsPerName})
	if err != nil {
		return JobRow{}, false, err
	}
	if len(recs) == 0 {
		// a dbt node job that recorded the name among its names: a seek of the namespace's jobs
		recs, err = s.readRecords(ctx, `MATCH (j:Job) WHERE j.namespace = $ns AND j.name IS NOT NULL
AND j.dbtUniqueId IS NOT NULL AND $name IN j.names RETURN `+jobProjection+` AS j ORDER BY j.key LIMIT $max`,
			map[string]any{"ns": namespace, "name": name, "max": MaxJobsPerName})
		if err != nil || len(recs) == 0 {
			return JobRow{}, false, err
		}
	}
	first := jobRowOf(Props(recs[0]).Sub("j"))
	if len(recs) == 1 || first.DbtUniqueID == "" {
		return first, true, nil
	}
	amb := &AmbiguousJobNameError{Namespace: namespace, Name: name}
	for _, r := range recs {
		amb.Jobs = append(amb.Jobs, jobRowOf(Props(r).Sub("j")))
	}
	return first, false, amb
}

// MaxJobsPerName bounds the dbt node jobs JobByName reads for one name (AmbiguousJobNameError.Jobs).
const MaxJobsPerName = 20

// AmbiguousJobNameError: a job name several dbt node jobs were reported under (two unique_ids or roles under one
// name, a producer's fault). The caller decides among those it may see; a job is never guessed.
type AmbiguousJobNameError struct {
	Namespace, Name string
	Jobs            []JobRow // at most MaxJobsPerName, in key order
}

func (e *AmbiguousJobNameError) Error() string {
	return fmt.Sprintf("job name %q in namespace %q was reported for %d dbt nodes", e.Name, e.Namespace, len(e.Jobs))
}

// JobByDbtUniqueID returns the job of a dbt node in a job namespace (its key form, normalize.KeyNamespace) in a
// role (DbtRoleNode, DbtRoleTests): one key lookup (docs/adr/0027-dbt-job-identity.md).
func (s *Store) JobByDbtUniqueID(ctx context.Context, namespace, uniqueID, role string) (JobRow, bool, error) {
	k := DbtJobKey(namespace, uniqueID, role)
	rows, err := s.JobsByKeys(ctx, []string{k})
	if err != nil {
		return JobRow{}, false, err
	}
	j, ok := rows[k]
	return j, ok, nil
}

// SearchAfter is Search by position: hits strictly after `after` in (name, label, key) order ("" name: from the
// start), so a caller that filters hits can page without offsets that count what it filtered out.
func (s *Store) SearchAfter(ctx context.Context, q string, after SearchHit, limit int) ([]SearchHit, error) {
	recs, err := s.readRecords(ctx, searchHits+`
WITH label, key, name
WHERE $an = '' OR name > $an OR (name = $an AND (label > $al OR (label = $al AND key > $ak)))
RETURN label, key, name ORDER BY name, label, key LIMIT $lim`,
		map[string]any{"q": q, "an": after.Name, "al": after.Label, "ak": after.Key, "lim": limit})
	if err != nil {
		return nil, err
	}
	out := make([]SearchHit, len(recs))
	for i, r := range recs {
		p := Props(r)
		out[i] = SearchHit{Label: p.Str("label"), Key: p.Str("key"), Name: p.Str("name")}
	}
	return out, nil
}
