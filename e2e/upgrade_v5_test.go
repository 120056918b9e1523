package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV5 = "testdata/upgrade-v5"

// fixtureTags reads a fixture dataset's current tags and tag history.
func fixtureTags(t *testing.T, store *graph.Store, fx, name string) graph.DatasetRow {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (d:Dataset {name: $name})
		WHERE d.namespace = 's3://' + $fx + '-lake' RETURN d.tags AS tags, d.tagHistory AS h`,
		map[string]any{"fx": fx, "name": name}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read %s: %v (%d rows)", name, err, len(res.Records))
	}
	tags, _ := res.Records[0].Get("tags")
	h, _ := res.Records[0].Get("h")
	row := graph.DatasetRow{}
	if s, ok := h.(string); ok {
		row.TagHistory = graph.ParseTagHistory(s)
	}
	for _, x := range tags.([]any) {
		row.Tags = append(row.Tags, x.(string))
	}
	return row
}

// The upgrade from projection version 5 with a graph version 5 really wrote: testdata/upgrade-v5 holds what
// version 5's binary (f4d22c6, main when version 6 began) wrote and answered for upgrade-v2's world plus tags
// facets (testdata/upgrade-v5/README.md): mart/daily tagged `confidential` and `day:pii` at minute 72, then
// `confidential` only at 74; curated/orders_v2 tagged `pii` at 62, then an empty tags facet at 64 (which version 5
// ignored). Version 6 (docs/adr/0066-temporal-tags.md) keeps every tag's validity: the upgrade rebuilds the tag
// histories from the archive, keeps every node, id and other history (the upgrade-v2 answers before and after),
// and gives the graph version 6 projects from the archive into an empty database.
func TestUpgradeAGraphWrittenByProjectionVersion5(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v5 := readFixtureDir(t, fixtureDirV5)
	fx := v5.Namespace

	eraseFixture(t, store, g, v5)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["5"] == 0 || w[project.NormVersion] != 0 {
		t.Fatalf("the fixture is not a version-5 graph: nodes by projection version %v", w)
	}
	if r := fixtureTags(t, store, fx, "curated/orders_v2"); r.TagHistory != nil || strings.Join(r.Tags, ",") != "pii" {
		t.Fatalf("version 5 kept the tags %v and no history %v", r.Tags, r.TagHistory)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v5)
	before := evidenceAnswers(t, api, v5)

	upgradeKeepingAnswers(t, api, v5, fixtureDirV5, before, "projection version 6 (ADR 0066, 0068): tag histories and job tags rebuilt from the archive's tags facets: 2 datasets, 0 jobs")
	checkTags := func(label string) {
		t.Helper()
		t0 := v5.World.T0
		at := func(min int64) int64 { return graph.Millis(t0) + min*60_000 }
		mart := fixtureTags(t, store, fx, "mart/daily")
		if got := strings.Join(mart.TagsAt(at(73)), ","); got != "confidential,day:pii" {
			t.Errorf("%s: mart/daily at minute 73: %q", label, got)
		}
		if got := strings.Join(mart.TagsAt(at(75)), ","); got != "confidential" || strings.Join(mart.Tags, ",") != "confidential" {
			t.Errorf("%s: mart/daily at minute 75: %q, now %v", label, got, mart.Tags)
		}
		if iv, ok := mart.TagAt("day:pii", at(73)); !ok || iv.Source != "governance" || iv.ValidTo != at(74) {
			t.Errorf("%s: mart/daily day:pii interval %+v", label, iv)
		}
		orders := fixtureTags(t, store, fx, "curated/orders_v2")
		if len(orders.Tags) != 0 || strings.Join(orders.TagsAt(at(63)), ",") != "pii" || len(orders.TagsAt(at(65))) != 0 {
			t.Errorf("%s: curated/orders_v2 tags %v, history %+v", label, orders.Tags, orders.TagHistory)
		}
	}
	checkTags("upgraded")
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 6 projects from the same archive, from nothing.
	replayFromNothing(t, store, g, v5, fixtureDirV5, "5")
	checkV3Answers(t, api, v5)
	checkTags("replayed")
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-5 graph differs from a version-6 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v5)
}
