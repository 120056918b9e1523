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

const fixtureDirV4 = "testdata/upgrade-v4"

// upgradeKeepingAnswers upgrades the fixture a in place from its archive in dir (`headwater upgrade`, limited to
// its namespaces), requires the output to contain each of want, and checks that every upgrade-v3 question and the
// evidence answers (before: what they were) are answered as before.
func upgradeKeepingAnswers(t *testing.T, api string, a *v1Answers, dir, before string, want ...string) {
	t.Helper()
	out := runOnce(t, "upgrade", "--dir="+copyArchiveDir(t, dir), "--namespace-prefix="+a.Namespace+"-", "--neo4j-query-timeout=10m")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("upgrade output (want %q):\n%s", w, out)
		}
	}
	checkV3Answers(t, api, a)
	if after := evidenceAnswers(t, api, a); after != before {
		t.Errorf("answers changed by the upgrade:\n%s", diff(before, after))
	}
}

// replayFromNothing erases the fixture a (graph g) and replays its archive in dir with this binary, as a fresh
// projection of the same events: every node is then this version's, none the previous version prev's.
func replayFromNothing(t *testing.T, store *graph.Store, g *v1Graph, a *v1Answers, dir, prev string) {
	t.Helper()
	eraseFixture(t, store, g, a)
	runOnce(t, "replay", "--dir="+copyArchiveDir(t, dir))
	if w := writtenBy(t, store, a.Namespace); w[project.NormVersion] == 0 || w[prev] != 0 {
		t.Errorf("the replayed graph was not written by version %s: %v", project.NormVersion, w)
	}
}

// writtenBy counts the fixture's Dataset, Field and Event nodes by the projection version that wrote them.
func writtenBy(t *testing.T, store *graph.Store, fx string) map[string]int64 {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (d:Dataset) WHERE d.namespace CONTAINS $p
		OPTIONAL MATCH (d)-[:HAS_FIELD]->(f:Field)
		WITH collect(DISTINCT d) + collect(DISTINCT f) AS ns
		UNWIND ns AS n
		RETURN n.normVersion AS v, count(*) AS c`, map[string]any{"p": fx}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range res.Records {
		v, _ := r.Get("v")
		c, _ := r.Get("c")
		s, _ := v.(string)
		out[s] += c.(int64)
	}
	return out
}

// The upgrade from projection version 4 with a graph version 4 really wrote: testdata/upgrade-v4 holds what
// version 4's binary (7244e20, main when version 5 began) wrote and answered for upgrade-v2's world (the demo,
// column lineage, a rename, a publication gate, parent and child runs, the identities, an unresolved symlink, a
// grant). Version 5 (docs/adr/0041-iceberg-catalog-sync-into-the-graph.md) adds properties only to what the Iceberg
// catalog sync reports (fields renamed under a stable id, snapshots as versions), none of which a version-4 graph
// holds, so its upgrade rewrites nothing; the test proves what must hold all the same: the new binary answers
// version 4's graph as version 4 did (ids, names, fields, histories, versions, runs, lineage evidence), before and
// after `headwater upgrade`, and the upgraded graph is the graph version 5 projects from the archive into an empty
// database. (No control replay without the upgrade: with nothing to rewrite it gives the same graph.)
func TestUpgradeAGraphWrittenByProjectionVersion4(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v4 := readFixtureDir(t, fixtureDirV4)
	fx := v4.Namespace

	eraseFixture(t, store, g, v4)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["4"] == 0 || w[project.NormVersion] != 0 {
		t.Fatalf("the fixture is not a version-4 graph: nodes by projection version %v", w)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v4) // upgrade-v2's questions, answered as version 4 answered them
	before := evidenceAnswers(t, api, v4)

	// The version-1 step's run scan reads every run of the shared database in one transaction (a known limit,
	// the issue-17 note): give the offline upgrade the time it takes there.
	upgradeKeepingAnswers(t, api, v4, fixtureDirV4, before, "projection version 5 (ADR 0041): nothing to rewrite", "replayed")
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph today's version projects from the same archive, from nothing (version 6 changes nothing here: the
	// world has no tags facet, ADR 0066).
	replayFromNothing(t, store, g, v4, fixtureDirV4, "4")
	checkV3Answers(t, api, v4)
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-4 graph differs from a version-5 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v4)
}
