package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV7 = "testdata/upgrade-v7"

// fixtureTimeTravelRead is the READ of the fixture's time-travel run and the Field ids its column edges come
// from: "version=… scan=… match=… reported=…; customer<-2 amount<-3".
func fixtureTimeTravelRead(t *testing.T, store *graph.Store, fx string) string {
	t.Helper()
	q := func(cypher string) []*neo4j.Record {
		res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, cypher, map[string]any{"ns": "s3://" + fx + "-lake"},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
		if err != nil {
			t.Fatal(err)
		}
		return res.Records
	}
	var b strings.Builder
	for _, r := range q(`MATCH (r:Run)-[:WROTE]->(:Dataset {namespace: $ns, name: 'export/orders_s1'}) MATCH (r)-[x:READ]->(:Dataset)
		RETURN x.datasetVersion AS v, x.scanSnapshotId AS scan, x.scanMatch AS m, x.reportedVersion AS rv`) {
		m := r.AsMap()
		fmt.Fprintf(&b, "version=%v scan=%v match=%v reported=%v;", m["v"], m["scan"], m["m"], m["rv"])
	}
	for _, r := range q(`MATCH (:Dataset {namespace: $ns, name: 'export/orders_s1'})-[:HAS_FIELD]->(o:Field)<-[:COLUMN_FEEDS]-(f:Field)
		RETURN o.path AS out, f.fieldId AS id ORDER BY out`) {
		m := r.AsMap()
		fmt.Fprintf(&b, " %v<-%v", m["out"], m["id"])
	}
	return b.String()
}

// fixtureJobTags is the fixture's tagged_job's jobTags.
func fixtureJobTags(t *testing.T, store *graph.Store, fx string) any {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (j:Job {namespace: $ns, name: 'tagged_job'}) RETURN j.jobTags AS t`,
		map[string]any{"ns": fx + "-jobs"}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read tagged_job: %v (%d rows)", err, len(res.Records))
	}
	v, _ := res.Records[0].Get("t")
	return v
}

// tagSetters lists the by of each tag interval, comma-separated.
func tagSetters(h []graph.TagInterval) string {
	var by []string
	for _, iv := range h {
		by = append(by, iv.By)
	}
	return strings.Trim(strings.Join(by, ","), ",")
}

// The upgrade from projection version 7 with a graph version 7 really wrote: testdata/upgrade-v7 holds what
// version 7's binary (ccee23d, main when version 8 began) wrote and answered for upgrade-v6's world plus a
// catalog table synced twice (snapshot S1 under schema 0, then customer renamed, amount dropped and re-added, S2)
// and a time-travel read of S1 shaped as OpenLineage 1.53.0's Spark integration sends it: version S2, the scan
// report naming S1 as a JSON double (testdata/upgrade-v7/README.md). Version 7 named S2 on the READ and put
// amount's edge on the re-added field 6; version 8 (docs/adr/0084-the-scanned-snapshot-of-a-time-travel-read.md)
// names S1 from the scan report, keeps S2 as the reported version, and amount's edge comes from the closed field 3;
// and each tag interval records the principal of the event that set it, and the empty job tags facet clears the
// job's tags (ADR 0086), both from the archive.
// The upgrade does that from the archive, keeps every node, id and other history (the upgrade-v2 answers, tags and
// blocks), and gives the graph version 8 projects from the archive into an empty database.
func TestUpgradeAGraphWrittenByProjectionVersion7(t *testing.T) {
	const s1, s2, s1Double = "8175655899474428532", "3671928165965023760", "8.1756558994744289E18"
	lockFixture(t)
	store := testenv.Store(t)
	g, v7 := readFixtureDir(t, fixtureDirV7)
	fx := v7.Namespace

	eraseFixture(t, store, g, v7)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["7"] == 0 || w[project.NormVersion] != 0 {
		t.Fatalf("the fixture is not a version-7 graph: nodes by projection version %v", w)
	}
	v7Read := "version=" + s2 + " scan=<nil> match=<nil> reported=<nil>; amount<-6 customer<-2"
	if got := fixtureTimeTravelRead(t, store, fx); got != v7Read {
		t.Fatalf("version 7's time-travel read: %s, want %s", got, v7Read)
	}
	if got := fixtureJobTags(t, store, fx); got != `["nightly","team=finance"]` {
		t.Fatalf("version 7's job tags: %v, want both (it ignored the empty facet)", got)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v7)
	before := evidenceAnswers(t, api, v7)
	at := func(min int64) int64 { return graph.Millis(v7.World.T0) + min*60_000 }
	tagsBefore := fixtureTags(t, store, fx, "mart/daily")
	if by := tagSetters(tagsBefore.TagHistory); by != "" {
		t.Fatalf("version 7 recorded who set mart/daily's tags: %s", by)
	}
	blocksBefore := fixtureBlocks(t, store, fx, "mart/daily")

	upgradeKeepingAnswers(t, api, v7, fixtureDirV7, before, project.UpgradeNoteV8+": 1 runs")
	v8Read := "version=" + s1 + " scan=" + s1Double + " match=" + fold.ScanMatched + " reported=" + s2 + "; amount<-3 customer<-2"
	check := func(label string) {
		t.Helper()
		if got := fixtureTimeTravelRead(t, store, fx); got != v8Read {
			t.Errorf("%s: the time-travel read: %s, want %s", label, got, v8Read)
		}
		if tags := fixtureTags(t, store, fx, "mart/daily"); strings.Join(tags.TagsAt(at(73)), ",") != strings.Join(tagsBefore.TagsAt(at(73)), ",") ||
			strings.Join(tags.TagsAt(at(73)), ",") != "confidential,day:pii" {
			t.Errorf("%s: tags at minute 73: %v", label, tags.TagsAt(at(73)))
		}
		for _, name := range []string{"mart/daily", "curated/orders_v2"} { // ADR 0086: the principal of the setting event
			if by := tagSetters(fixtureTags(t, store, fx, name).TagHistory); by == "" || strings.Trim(strings.ReplaceAll(by, fx+"-admin", ""), ",") != "" {
				t.Errorf("%s: %s's tag intervals were set by %q, want %s-admin each", label, name, by, fx)
			}
		}
		if got := fixtureJobTags(t, store, fx); got != `[]` { // ADR 0086: the empty facet at minute 152 cleared them
			t.Errorf("%s: job tags %v, want none ([])", label, got)
		}
		if blocks := fixtureBlocks(t, store, fx, "mart/daily"); len(blocks.BlocksAt(at(77))) != 2 ||
			len(blocks.BlocksAt(at(77))) != len(blocksBefore.BlocksAt(at(77))) {
			t.Errorf("%s: blocks at minute 77: %+v, before %+v", label, blocks.BlocksAt(at(77)), blocksBefore.BlocksAt(at(77)))
		}
	}
	check("upgraded")
	// GraphQL shows the READ's scan report and what was made of it (RunIO.scan).
	ans := gqlOK(t, api, token, `query($ns: String!) { dataset(namespace: $ns, name: "export/orders_s1") {
		lastWrittenBy { inputs { version scan { snapshotId match reportedVersion } } } } }`, map[string]any{"ns": "s3://" + fx + "-lake"})
	if got, _ := json.Marshal(ans); !strings.Contains(string(got), `"inputs":[{"scan":{"match":"MATCHED","reportedVersion":"`+s2+`","snapshotId":"`+s1Double+`"},"version":"`+s1+`"}]`) {
		t.Errorf("the time-travel run's inputs through GraphQL: %s", got)
	}
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 8 projects from the same archive, from nothing.
	replayFromNothing(t, store, g, v7, fixtureDirV7, "7")
	checkV3Answers(t, api, v7)
	check("replayed")
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-7 graph differs from a version-8 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v7)
}
