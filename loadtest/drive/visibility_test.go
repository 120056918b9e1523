package drive_test

import (
	"context"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/loadtest/drive"
)

// The projector keys Event nodes by the sending principal and the eventId (graph.EventKey): the visibility probe
// must look them up the same way, or no sent event is ever seen and every run waits out its drain.
func TestVisibilityFindsEventsKeyedByPrincipal(t *testing.T) {
	testenv.Servers(t)
	store := testenv.Store(t)
	ctx := context.Background()
	ns := testenv.Namespace(t)
	seen, other := ns+"-seen", ns+"-missing"
	_, err := neo4j.ExecuteQuery(ctx, store.Driver, "CREATE (:"+graph.LabelEvent+" {key: $k})",
		map[string]any{"k": graph.EventKey("bench-producer", seen)}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = neo4j.ExecuteQuery(context.Background(), store.Driver, "MATCH (e:"+graph.LabelEvent+" {key: $k}) DELETE e",
			map[string]any{"k": graph.EventKey("bench-producer", seen)}, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(store.Database))
	})
	got, err := (&drive.Neo4jVisibility{Store: store, Principal: "bench-producer"}).Visible(ctx, []string{other, seen})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != seen {
		t.Fatalf("visible %v, want [%s]", got, seen)
	}
}
