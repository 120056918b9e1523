package graph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

func TestMigrateIsIdempotentAndCreatesTheConstraints(t *testing.T) {
	s := testenv.Store(t) // migrates once
	ctx := context.Background()
	from, to, err := s.Migrate(ctx)
	if err != nil || from != graph.SchemaVersion() || to != graph.SchemaVersion() {
		t.Fatalf("second migrate: from=%d to=%d err=%v", from, to, err)
	}
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatalf("check after migrate: %v", err)
	}
	res, err := neo4j.ExecuteQuery(ctx, s.Driver, "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names", nil,
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := res.Records[0].Get("names")
	have := map[string]bool{}
	for _, n := range names.([]any) {
		have[n.(string)] = true
	}
	for _, want := range []string{"dataset_key", "dataset_name_ident", "job_key", "run_key", "event_key", "field_key", "grant_epoch_id", "api_token_id"} {
		if !have[want] {
			t.Errorf("constraint %s missing", want)
		}
	}
	// A unique constraint really holds: a second Event with the same key is refused.
	key := "migrate-test-" + testenv.Token(6)
	q := "CREATE (:Event {key: $k})"
	if _, err := neo4j.ExecuteQuery(ctx, s.Driver, q, map[string]any{"k": key}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database)); err != nil {
		t.Fatal(err)
	}
	defer neo4j.ExecuteQuery(ctx, s.Driver, "MATCH (e:Event {key: $k}) DELETE e", map[string]any{"k": key}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if _, err := neo4j.ExecuteQuery(ctx, s.Driver, q, map[string]any{"k": key}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database)); err == nil {
		t.Fatal("duplicate Event key accepted: uniqueness constraint missing")
	}
}

func TestServeRefusesANewerOrOlderSchema(t *testing.T) {
	if err := graph.CompareSchemaForTest(graph.SchemaVersion()+1, graph.SchemaVersion()); !errors.Is(err, graph.ErrSchemaTooNew) {
		t.Fatalf("newer database: %v", err)
	}
	if err := graph.CompareSchemaForTest(0, graph.SchemaVersion()); !errors.Is(err, graph.ErrSchemaTooOld) {
		t.Fatalf("unmigrated database: %v", err)
	}
	if err := graph.CompareSchemaForTest(graph.SchemaVersion(), graph.SchemaVersion()); err != nil {
		t.Fatal(err)
	}
}
