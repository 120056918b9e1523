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
		// keyed like the Event node: the producer principal's event id (EventKey)
		rows[i] = map[string]any{"key": EventKey(r.Principal, r.EventID), "eventId": r.EventID, "reason": r.Reason, "field": r.Field, "rule": r.Rule,
			"producer": r.Producer, "principal": r.Principal, "stage": r.Stage,
			"receivedAt": Millis(r.ReceivedAt), "payloadRef": r.Source}
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
