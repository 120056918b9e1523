package e2e

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV3 = "testdata/upgrade-v3"

// What projection version 4 stores in another form (docs/adr/0035-write-what-changed.md): the lineage edges'
// evidence (dataset and field granularity, both directions) and the runs' inputs and outputs.
const (
	evidenceLineageQuery = `query($ns: String!, $name: String!, $g: Granularity!, $d: Direction!) {
	lineage(start: {dataset: {namespace: $ns, name: $name}}, direction: $d, depth: 5, granularity: $g, includeAttempted: true) {
	nodes { id } edges { id from to job { id } validFrom validTo intervals { validFrom validTo publication } lastObservedAt
	stale evidence { kind producer source eventIds runId runState jobVersion observedAt publication derivation }
	transformations { type subtype masking description } } } }`
	evidenceJobQuery = `query($ns: String!, $name: String!) { job(namespace: $ns, name: $name) {
	id namespace name runs(first: 50) { nodes { id state
	inputs { role dataset { id } version publication firstObservedAt observedAt }
	outputs { role dataset { id } version publication firstObservedAt observedAt } } } } }`
)

// evidenceAnswers asks the API everything version 4 stores in another form, for every dataset and job of the
// fixture, as one JSON document.
func evidenceAnswers(t *testing.T, api string, a *v1Answers) string {
	t.Helper()
	out := map[string]any{}
	for _, d := range a.Datasets {
		if d.Answer == nil {
			continue
		}
		for _, g := range []string{"DATASET", "FIELD"} {
			for _, dir := range []string{"UPSTREAM", "DOWNSTREAM"} {
				out[d.Ask[0]+" "+d.Ask[1]+" "+g+" "+dir] = gqlOK(t, api, token, evidenceLineageQuery,
					map[string]any{"ns": d.Ask[0], "name": d.Ask[1], "g": g, "d": dir})["lineage"]
			}
		}
	}
	for _, j := range a.Jobs {
		out["job "+j.Ask[0]+" "+j.Ask[1]] = gqlOK(t, api, token, evidenceJobQuery,
			map[string]any{"ns": j.Ask[0], "name": j.Ask[1]})["job"]
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// storedForm counts, under the fixture's namespaces, what tells version 4's stored form from version 3's: jobs
// with the latest evidence of their edges, INPUT_TO/OUTPUT_TO without their own, jobs with version 3's metaStamps,
// READs with a publication.
func storedForm(t *testing.T, store *graph.Store, fx string) map[string]int64 {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (j:Job) WHERE j.namespace STARTS WITH $p
		RETURN count(j.evLastRunId) AS jobsWithEvidence, count(j.metaStamps) AS jobsWithMetaStamps,
		  sum(COUNT { MATCH (j)-[e:OUTPUT_TO|INPUT_TO]-(:Dataset) WHERE e.kind = 'OBSERVED' AND e.lastRunId IS NULL }) AS edgesThroughJob,
		  sum(COUNT { MATCH (:Run {jobKey: j.key})-[x:READ]->(:Dataset) WHERE x.publication IS NOT NULL }) AS readsWithPublication`,
		map[string]any{"p": fx}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for k, v := range res.Records[0].AsMap() {
		out[k] = v.(int64)
	}
	return out
}

// The upgrade from projection version 3 with a graph version 3 really wrote: testdata/upgrade-v3 holds what
// version 3's binary (742d919, main when version 4 began) wrote and answered for upgrade-v2's world (the demo,
// column lineage, a rename, a publication gate, parent and child runs, the identities, an unresolved symlink, a
// grant). Version 4 keeps the latest evidence of lineage edges once on the job, run detail without what its rows
// share, and inline metadata stamps. The new binary answers version 3's graph as version 3 did before the upgrade
// (readers coalesce); after `headwater upgrade` every answer that reads the moved values (lineage evidence at
// dataset and field granularity, run inputs and outputs) is byte-identical to what it was before, the ids and
// histories are what version 3 answered, the graph is in version 4's form, and it is the graph version 4 projects
// from the archive into an empty database. Replaying the archive without the upgrade does not give that graph.
func TestUpgradeAGraphWrittenByProjectionVersion3(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v3 := readFixtureDir(t, fixtureDirV3)
	fx := v3.Namespace

	eraseFixture(t, store, g, v3)
	loadV1Graph(t, store, g)
	if f := storedForm(t, store, fx); f["jobsWithEvidence"] != 0 || f["jobsWithMetaStamps"] == 0 || f["readsWithPublication"] == 0 {
		t.Fatalf("the fixture is not a version-3 graph: %v", f)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v3)
	before := evidenceAnswers(t, api, v3)

	out := runOnce(t, "upgrade", "--dir="+copyArchiveDir(t, fixtureDirV3), "--namespace-prefix="+fx+"-")
	if !strings.Contains(out, "wrote the edges, run detail and stamps of") || !strings.Contains(out, "replayed") {
		t.Fatalf("upgrade output:\n%s", out)
	}
	f := storedForm(t, store, fx)
	if f["jobsWithEvidence"] == 0 || f["edgesThroughJob"] == 0 || f["jobsWithMetaStamps"] != 0 || f["readsWithPublication"] != 0 {
		t.Errorf("the upgraded graph is not in version 4's form: %v", f)
	}
	checkV3Answers(t, api, v3)
	if after := evidenceAnswers(t, api, v3); after != before {
		t.Errorf("answers changed by the upgrade:\n%s", diff(before, after))
	}
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 4 projects from the same archive, from nothing.
	eraseFixture(t, store, g, v3)
	runOnce(t, "replay", "--dir="+copyArchiveDir(t, fixtureDirV3))
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-3 graph differs from a version-4 projection of its archive:\n%s", diff(upgraded, fresh))
	}

	// The control: replaying the archive over version 3's graph without the upgrade does not give that graph.
	eraseFixture(t, store, g, v3)
	loadV1Graph(t, store, g)
	runOnce(t, "replay", "--dir="+copyArchiveDir(t, fixtureDirV3))
	if skipped := comparableDump(dumpFixture(t, store, fx)); skipped == fresh {
		t.Error("replay without the upgrade gave the version-4 graph: the test cannot tell an upgraded graph")
	}
	eraseFixture(t, store, g, v3)
}

// checkV3Answers asks what version 3 was asked (gen/answers.go): every dataset (ids, fields, identity), every job
// (versions, runs, events, outputs) and the hive table's column lineage answer as version 3 answered them.
func checkV3Answers(t *testing.T, api string, v3 *v1Answers) {
	t.Helper()
	for _, d := range v3.Datasets {
		if d.Answer == nil {
			continue
		}
		got := gqlOK(t, api, token, upgradeDatasetQuery, map[string]any{"ns": d.Ask[0], "name": d.Ask[1]})["dataset"]
		if !reflect.DeepEqual(got, any(d.Answer)) {
			t.Errorf("dataset %v:\nversion 3: %v\nnow:       %v", d.Ask, d.Answer, got)
		}
	}
	for _, j := range v3.Jobs {
		got := gqlOK(t, api, token, upgradeJobQuery, map[string]any{"ns": j.Ask[0], "name": j.Ask[1]})["job"]
		if !reflect.DeepEqual(got, any(j.Answer)) {
			t.Errorf("job %v:\nversion 3: %v\nnow:       %v", j.Ask, j.Answer, got)
		}
	}
	if v3.IdentityLineage == nil {
		t.Fatal("the fixture has no column lineage answer")
	}
	fx := v3.Namespace
	lin := gqlOK(t, api, token, upgradeLineageQuery, map[string]any{"ns": "hive://" + fx + "-metastore:9083",
		"name": "default.orders_" + strings.ToLower(strings.ReplaceAll(fx, "-", "_"))})["lineage"].(map[string]any)
	if w, g := edgeSet(v3.IdentityLineage), edgeSet(lin); !reflect.DeepEqual(w, g) || len(w) == 0 {
		t.Errorf("column lineage of the hive table:\nversion 3: %v\nnow:       %v", w, g)
	}
}
