package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV6 = "testdata/upgrade-v6"

// fixtureBlocks reads a fixture dataset's block history.
func fixtureBlocks(t *testing.T, store *graph.Store, fx, name string) graph.DatasetRow {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (d:Dataset {name: $name})
		WHERE d.namespace = 's3://' + $fx + '-lake' RETURN d.blockHistory AS h`,
		map[string]any{"fx": fx, "name": name}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read %s: %v (%d rows)", name, err, len(res.Records))
	}
	h, _ := res.Records[0].Get("h")
	row := graph.DatasetRow{}
	if s, ok := h.(string); ok {
		row.BlockHistory = graph.ParseBlockHistory(s)
	}
	return row
}

// The upgrade from projection version 6 with a graph version 6 really wrote: testdata/upgrade-v6 holds what
// version 6's binary (a75d705, main when version 7 began) wrote and answered for upgrade-v5's world (tags facets)
// plus block facets (testdata/upgrade-v6/README.md): mart/daily blocks its field day and the edge into total from
// curated/orders_v2.amount through the daily job at minute 76, then the edge only at 78. Version 6 kept the facet
// opaque; version 7 (docs/adr/0067-governance-tags-and-blocks-by-mutation.md) keeps every block's validity: the
// upgrade rebuilds the block histories from the archive, keeps every node, id and other history (tags included:
// the upgrade-v2 answers and the tag intervals before and after), and gives the graph version 7 projects from the
// archive into an empty database.
func TestUpgradeAGraphWrittenByProjectionVersion6(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v6 := readFixtureDir(t, fixtureDirV6)
	fx := v6.Namespace

	eraseFixture(t, store, g, v6)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["6"] == 0 || w["7"] != 0 {
		t.Fatalf("the fixture is not a version-6 graph: nodes by projection version %v", w)
	}
	if r := fixtureBlocks(t, store, fx, "mart/daily"); r.BlockHistory != nil {
		t.Fatalf("version 6 kept a block history %v", r.BlockHistory)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v6)
	before := evidenceAnswers(t, api, v6)
	at := func(min int64) int64 { return graph.Millis(v6.World.T0) + min*60_000 }
	tagsBefore := fixtureTags(t, store, fx, "mart/daily")

	upgradeKeepingAnswers(t, api, v6, fixtureDirV6, before, "projection version 7 (ADR 0067): block histories rebuilt from the archive's headwater_governance_block facets: 1 datasets")
	checkBlocks := func(label string) {
		t.Helper()
		mart := fixtureBlocks(t, store, fx, "mart/daily")
		if got := mart.BlocksAt(at(75)); len(got) != 0 {
			t.Errorf("%s: blocks at minute 75: %+v", label, got)
		}
		got := mart.BlocksAt(at(77))
		if len(got) != 2 || got[0].Field != "day" || got[0].ValidTo != at(78) || got[0].Reason != "day is generalised downstream" ||
			got[1].Field != "total" || got[1].Edge == nil || got[1].Edge.Name != "curated/orders_v2" || got[1].Edge.Field != "amount" {
			t.Errorf("%s: blocks at minute 77: %+v", label, got)
		}
		if got := mart.BlocksAt(at(79)); len(got) != 1 || got[0].Field != "total" || got[0].ValidTo != graph.OpenEnd {
			t.Errorf("%s: blocks at minute 79: %+v", label, got)
		}
		if tags := fixtureTags(t, store, fx, "mart/daily"); strings.Join(tags.TagsAt(at(73)), ",") != strings.Join(tagsBefore.TagsAt(at(73)), ",") ||
			strings.Join(tags.TagsAt(at(73)), ",") != "confidential,day:pii" {
			t.Errorf("%s: tags at minute 73: %v", label, tags.TagsAt(at(73)))
		}
	}
	checkBlocks("upgraded")
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 7 projects from the same archive, from nothing.
	replayFromNothing(t, store, g, v6, fixtureDirV6, "6")
	checkV3Answers(t, api, v6)
	checkBlocks("replayed")
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-6 graph differs from a version-7 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v6)
}
