package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// RecordQuarantined stores quarantine records (without payloads, which stay on the quarantine topic) so a producer
// can ask what became of an event. Idempotent: keyed by event id; the latest record's reason wins.
func (s *Store) RecordQuarantined(ctx context.Context, recs []kafkaio.QuarantineRecord) error {
	if len(recs) == 0 {
		return nil
	}
	rows := make([]map[string]any, len(recs))
	for i, r := range recs {
		rows[i] = map[string]any{"key": r.EventID, "reason": r.Reason, "field": r.Field, "rule": r.Rule,
			"producer": r.Producer, "principal": r.Principal, "stage": r.Stage,
			"receivedAt": Millis(r.ReceivedAt), "payloadRef": r.Source}
	}
	_, err := neo4j.ExecuteQuery(ctx, s.Driver, `
UNWIND $rows AS r
MERGE (q:Quarantined {key: r.key})
SET q.reason = r.reason, q.field = r.field, q.rule = r.rule, q.producer = r.producer, q.principal = r.principal,
    q.stage = r.stage, q.receivedAt = r.receivedAt, q.payloadRef = r.payloadRef`,
		map[string]any{"rows": rows}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		return fmt.Errorf("record quarantined: %w", err)
	}
	return nil
}

// QuarantinedRow is one stored quarantine record.
type QuarantinedRow struct {
	EventID, Reason, Field, Rule, Producer, Principal, Stage, Source string
	ReceivedAt                                                       int64
}

// QuarantinePos is a position in the newest-first order of quarantine records: after the record received at
// ReceivedAt with EventID (ties broken by id). The zero value is the start.
type QuarantinePos struct {
	ReceivedAt int64
	EventID    string
}

// QuarantinedPage returns up to limit quarantine records after pos, newest first; principal "" reads every
// principal's. Without an index on principal the read scans the Quarantined label (see docs/permissions.md,
// issue 13 item 7); a page is bounded by limit either way.
func (s *Store) QuarantinedPage(ctx context.Context, principal string, pos QuarantinePos, limit int) ([]QuarantinedRow, error) {
	params := map[string]any{"principal": principal, "at": pos.ReceivedAt, "id": pos.EventID, "start": pos.EventID == "",
		"limit": int64(limit)}
	recs, err := s.readRecords(ctx, `MATCH (q:Quarantined)
WHERE ($principal = '' OR q.principal = $principal)
  AND ($start OR q.receivedAt < $at OR (q.receivedAt = $at AND q.key > $id))
RETURN properties(q) AS q ORDER BY q.receivedAt DESC, q.key ASC LIMIT $limit`, params)
	if err != nil {
		return nil, err
	}
	out := make([]QuarantinedRow, len(recs))
	for i, r := range recs {
		q := Props(r).Sub("q")
		out[i] = QuarantinedRow{EventID: q.Str("key"), Reason: q.Str("reason"), Field: q.Str("field"), Rule: q.Str("rule"),
			Producer: q.Str("producer"), Principal: q.Str("principal"), Stage: q.Str("stage"), Source: q.Str("payloadRef"),
			ReceivedAt: q.Int("receivedAt")}
	}
	return out, nil
}
