package graph_test

import (
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// A quarantine page reads at most its scan budget of records, in event-id order, whoever they belong to, and
// returns only the principal's.
func TestQuarantinedPageIsBoundedByItsScan(t *testing.T) {
	s := testenv.Store(t)
	prefix := "zzq-" + testenv.Token(5)
	var recs []graph.QuarantinedRow
	for i, p := range []string{"a", "b", "a", "a", "b"} {
		recs = append(recs, graph.QuarantinedRow{EventID: prefix + "-" + string(rune('1'+i)), Reason: "r", Rule: "x",
			Principal: prefix + p, Stage: "gateway", ReceivedAt: graph.Millis(time.Now())})
	}
	t.Cleanup(func() {
		_, _ = neo4j.ExecuteQuery(t.Context(), s.Driver, "MATCH (q:Quarantined) WHERE q.key STARTS WITH $p DELETE q",
			map[string]any{"p": prefix}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	})
	if err := s.RecordQuarantined(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	got, err := s.QuarantinedPage(t.Context(), prefix+"a", prefix, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scanned != 2 || got.LastKey != graph.EventKey(prefix+"b", prefix+"-2") || len(got.Rows) != 1 || got.Rows[0].EventID != prefix+"-1" {
		t.Fatalf("first scan: %+v", got)
	}
	got, err = s.QuarantinedPage(t.Context(), prefix+"a", got.LastKey, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scanned != 3 || len(got.Rows) != 1 || got.Rows[0].EventID != prefix+"-3" || got.Rows[0].Principal != prefix+"a" {
		t.Fatalf("second scan, limit 1: %+v", got)
	}
}
