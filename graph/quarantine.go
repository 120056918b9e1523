package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// RecordQuarantined stores quarantine records (without payloads, which stay on the quarantine topic) so a producer
// can ask what became of an event. Idempotent: keyed by event id; the latest record's reason wins. The caller
// maps the quarantine topic's record (kafkaio.QuarantineRecord) to rows: graph imports no ingest package.
func (s *Store) RecordQuarantined(ctx context.Context, recs []QuarantinedRow) error {
	if len(recs) == 0 {
		return nil
	}
	rows := make([]map[string]any, len(recs))
	for i, r := range recs {
		// keyed like the Event node: the producer principal's event id (EventKey)
		rows[i] = map[string]any{"key": EventKey(r.Principal, r.EventID), "eventId": r.EventID, "reason": r.Reason, "field": r.Field, "rule": r.Rule,
			"producer": r.Producer, "principal": r.Principal, "stage": r.Stage,
			"receivedAt": r.ReceivedAt, "payloadRef": r.Source}
	}
	_, err := neo4j.ExecuteQuery(ctx, s.Driver, `
UNWIND $rows AS r
MERGE (q:Quarantined {key: r.key})
SET q.eventId = r.eventId, q.reason = r.reason, q.field = r.field, q.rule = r.rule, q.producer = r.producer, q.principal = r.principal,
    q.stage = r.stage, q.receivedAt = r.receivedAt, q.payloadRef = r.payloadRef`,
		map[string]any{"rows": rows}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		return fmt.Errorf("record quarantined: %w", err)
	}
	return nil
}

// QuarantinedRow is one stored quarantine record (a quarantine-topic record without its payload; Source is the
// payload's reference, ReceivedAt epoch milliseconds).
type QuarantinedRow struct {
	EventID, Reason, Field, Rule, Producer, Principal, Stage, Source string
	ReceivedAt                                                       int64
}

// QuarantinedScan is one bounded read of quarantine records in event-id order.
type QuarantinedScan struct {
	Rows    []QuarantinedRow // the matching records read, in event-id order (at most the limit asked plus one)
	Scanned int              // records read, matching or not
	LastKey string           // event id of the last record read ("" when none)
}

// QuarantinedPage reads at most scan quarantine records with an event id after afterKey, in event-id order (the
// unique index on key: no read beyond the budget), and returns those of principal ("" for every principal's), at
// most limit of them.
func (s *Store) QuarantinedPage(ctx context.Context, principal, afterKey string, scan, limit int) (QuarantinedScan, error) {
	params := map[string]any{"principal": principal, "after": afterKey, "scan": int64(scan), "limit": int64(limit)}
	recs, err := s.ReadRecords(ctx, `MATCH (q:Quarantined) WHERE q.key > $after
WITH q ORDER BY q.key LIMIT $scan
WITH collect(q) AS scanned
RETURN size(scanned) AS n, CASE WHEN size(scanned) = 0 THEN '' ELSE scanned[-1].key END AS lastKey,
  [x IN scanned WHERE $principal = '' OR x.principal = $principal | properties(x)][..$limit] AS rows`, params)
	if err != nil || len(recs) == 0 {
		return QuarantinedScan{}, err
	}
	r := Props(recs[0])
	out := QuarantinedScan{Scanned: int(r.Int("n")), LastKey: r.Str("lastKey")}
	for _, q := range r.List("rows") {
		id := q.Str("eventId") // the key is EventKey(principal, id); records written before it carry only the key
		if id == "" {
			id = q.Str("key")
		}
		out.Rows = append(out.Rows, QuarantinedRow{EventID: id, Reason: q.Str("reason"), Field: q.Str("field"),
			Rule: q.Str("rule"), Producer: q.Str("producer"), Principal: q.Str("principal"), Stage: q.Str("stage"),
			Source: q.Str("payloadRef"), ReceivedAt: q.Int("receivedAt")})
	}
	return out, nil
}
