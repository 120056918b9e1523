package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV9 = "testdata/upgrade-v9"

// maskChangeLineageQuery is the column lineage of the fixture's crm/customers_masked.email_h one hop upstream at
// $asOf, as the generator asked it (gen/maskchange.go), with an optional transformation filter.
const maskChangeLineageQuery = `query($ns: String!, $asOf: Time, $tf: TransformationFilter) { lineage(start: {field: {namespace: $ns,
	name: "crm/customers_masked", field: "email_h"}}, direction: UPSTREAM, depth: 1, granularity: FIELD, asOf: $asOf,
	transformations: $tf) { edges { from to validFrom validTo transformations { type subtype masking description } } } }`

// maskChangeAnswer is the lineage answer of email_h's upstream column edge at minute min after the world's T0 as
// "type/subtype masking=… description" per edge, and the answer itself.
func maskChangeAnswer(t *testing.T, api string, a *v1Answers, min int64, tf map[string]any) (string, map[string]any) {
	t.Helper()
	asOf := a.World.T0.Add(time.Duration(min) * time.Minute).Format("2006-01-02T15:04:05.000Z")
	vars := map[string]any{"ns": "s3://" + a.Namespace + "-lake", "asOf": asOf}
	if tf != nil {
		vars["tf"] = tf
	}
	lin := gqlOK(t, api, token, maskChangeLineageQuery, vars)["lineage"].(map[string]any)
	raw, _ := json.Marshal(lin)
	var l struct {
		Edges []struct {
			Transformations []struct {
				Type, Subtype string
				Masking       bool
				Description   *string
			}
		}
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, e := range l.Edges {
		var ts []string
		for _, tr := range e.Transformations {
			d := "-"
			if tr.Description != nil {
				d = *tr.Description
			}
			ts = append(ts, fmt.Sprintf("%s/%s masking=%v %s", tr.Type, tr.Subtype, tr.Masking, d))
		}
		parts = append(parts, strings.Join(ts, ","))
	}
	return strings.Join(parts, "; "), lin
}

// fixtureTransformHistories is the stored transformation history (tHistory) of each column edge into
// crm/customers_masked, "out: [minute TYPE/SUBTYPE/masking …]" (or "none"), ordered by the output field.
func fixtureTransformHistories(t *testing.T, store *graph.Store, a *v1Answers) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (:Dataset {namespace: $ns, name: 'crm/customers_masked'})
		-[:HAS_FIELD]->(o:Field)<-[c:COLUMN_FEEDS]-(:Field) RETURN o.path AS out, c[$prop] AS h ORDER BY out`,
		map[string]any{"ns": "s3://" + a.Namespace + "-lake", "prop": graph.ColumnTransformHistoryProp},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	t0 := graph.Millis(a.World.T0)
	var b strings.Builder
	for _, r := range res.Records {
		m := r.AsMap()
		fmt.Fprintf(&b, "%v:", m["out"])
		s, _ := m["h"].(string)
		if s == "" {
			b.WriteString(" none; ")
			continue
		}
		var h []graph.TransformationsFrom
		if err := json.Unmarshal([]byte(s), &h); err != nil {
			t.Fatalf("%v's tHistory %q: %v", m["out"], s, err)
		}
		for _, e := range h {
			fmt.Fprintf(&b, " %d", (e.At-t0)/60_000)
			for i := range e.Types {
				fmt.Fprintf(&b, " %s/%s/%v", e.Types[i], e.Subtypes[i], e.Masking[i])
			}
		}
		b.WriteString("; ")
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// The upgrade from projection version 9 with a graph version 9 really wrote: testdata/upgrade-v9 holds what
// version 9's binary (aee4812, main when version 10 began) wrote and answered for upgrade-v8's world plus three
// runs of mask_change_job (START at minutes 170, 172, 174) writing crm/customers_masked from crm/customers, whose
// column lineage reports email_h <- email DIRECT IDENTITY in run 1 and DIRECT TRANSFORMATION masking ("sha256")
// in runs 2 and 3, id <- id DIRECT IDENTITY in all (testdata/upgrade-v9/README.md). Version 9 kept the latest
// run's transformations only, so an asOf of minute 171 answered the masking; version 10 (ADR 0091) keeps the
// edge's transformation history (tHistory: IDENTITY from 170, the masking from 172), refolded by the upgrade from
// all the runs of every job with column lineage, and answers IDENTITY at minute 171. The upgrade keeps every node,
// id and other history (the upgrade-v2 answers, upgrade-v8's job tag history), and gives the graph version 10
// projects from the archive into an empty database.
func TestUpgradeAGraphWrittenByProjectionVersion9(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v9 := readFixtureDir(t, fixtureDirV9)
	fx := v9.Namespace
	if len(v9.MaskChange) != 2 {
		t.Fatalf("the fixture has no mask change answers: %v", v9.MaskChange)
	}

	eraseFixture(t, store, g, v9)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["9"] == 0 || w[project.NormVersion] != 0 {
		t.Fatalf("the fixture is not a version-9 graph: nodes by projection version %v", w)
	}
	if got := fixtureTransformHistories(t, store, v9); got != "email_h: none; id: none" {
		t.Fatalf("version 9's column edges have a transformation history: %s", got)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v9)
	before := evidenceAnswers(t, api, v9)
	t0 := graph.Millis(v9.World.T0)
	const jobTags = "team=crm [160,162) by admin; team=crm [164,now) by admin; team=sales [162,164) by admin; tags [team=crm]"
	if got, raw := jobTagHistoryAnswer(t, api, fx, t0); got != jobTags {
		t.Fatalf("version 9's graph: tag_history_job's tag history: %s\nwant %s\n%s", got, jobTags, raw)
	}
	const identity, masked = "DIRECT/IDENTITY masking=false -", "DIRECT/TRANSFORMATION masking=true sha256"
	for _, min := range []int64{171, 175} {
		got, ans := maskChangeAnswer(t, api, v9, min, nil)
		if !reflect.DeepEqual(any(ans), v9.MaskChange[fmt.Sprint(min)]) {
			t.Errorf("version 9's graph: email_h's column lineage at minute %d:\nversion 9: %v\nnow:       %v", min, v9.MaskChange[fmt.Sprint(min)], ans)
		}
		if got != masked { // version 9 kept the latest run's transformations only
			t.Errorf("version 9's graph: email_h's transformations at minute %d: %s, want %s", min, got, masked)
		}
	}

	upgradeKeepingAnswers(t, api, v9, fixtureDirV9, before, project.UpgradeNoteV10+"\n")
	const history = "email_h: 170 DIRECT/IDENTITY/false 172 DIRECT/TRANSFORMATION/true; id: none"
	stopAtMasking := map[string]any{"stopAtMasking": true}
	check := func(label string) (upgradedAt171 map[string]any) {
		t.Helper()
		if got := fixtureTransformHistories(t, store, v9); got != history {
			t.Errorf("%s: stored transformation histories: %s\nwant %s", label, got, history)
		}
		for _, c := range []struct {
			min  int64
			want string
		}{{170, identity}, {171, identity}, {172, masked}, {175, masked}} {
			got, ans := maskChangeAnswer(t, api, v9, c.min, nil)
			if got != c.want {
				t.Errorf("%s: email_h's transformations at minute %d: %s, want %s\n%v", label, c.min, got, c.want, ans)
			}
			if c.min == 171 {
				upgradedAt171 = ans
			}
		}
		// The filter judges the edge by the transformations in force at asOf: crossed before the masking began.
		if got, ans := maskChangeAnswer(t, api, v9, 171, stopAtMasking); got != identity {
			t.Errorf("%s: stopAtMasking at minute 171: %s, want the IDENTITY edge\n%v", label, got, ans)
		}
		if got, ans := maskChangeAnswer(t, api, v9, 175, stopAtMasking); got != "" {
			t.Errorf("%s: stopAtMasking at minute 175: %s, want no edge\n%v", label, got, ans)
		}
		if got, raw := jobTagHistoryAnswer(t, api, fx, t0); got != jobTags {
			t.Errorf("%s: tag_history_job's tag history: %s\nwant %s\n%s", label, got, jobTags, raw)
		}
		return upgradedAt171
	}
	upgradedAt171 := check("upgraded")
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 10 projects from the same archive, from nothing.
	replayFromNothing(t, store, g, v9, fixtureDirV9, "9")
	checkV3Answers(t, api, v9)
	if freshAt171 := check("replayed"); !reflect.DeepEqual(freshAt171, upgradedAt171) {
		t.Errorf("email_h's column lineage at minute 171 upgraded:\n%v\nreplayed:\n%v", upgradedAt171, freshAt171)
	}
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-9 graph differs from a version-10 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v9)
}
