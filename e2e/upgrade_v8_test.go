package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/project"
	"github.com/headwater-data/headwater/internal/testenv"
)

const fixtureDirV8 = "testdata/upgrade-v8"

// jobTagHistoryQuery is the fixture's tag_history_job's tags and tag history.
const jobTagHistoryQuery = `query($ns: String!) { job(namespace: $ns, name: "tag_history_job") { id tags { name }
	tagHistory { permissionsFiltered entries { name field class value validFrom validTo eventId by sensitive } } } }`

// jobTagHistoryAnswer is Job.tagHistory of the fixture's tag_history_job as "name [from, to) by eventId" lines
// (minutes after the world's T0), and the whole answer as JSON.
func jobTagHistoryAnswer(t *testing.T, api, fx string, t0 int64) (string, string) {
	t.Helper()
	ans := gqlOK(t, api, token, jobTagHistoryQuery, map[string]any{"ns": fx + "-jobs"})
	raw, _ := json.Marshal(ans)
	var a struct {
		Job struct {
			Tags       []struct{ Name string }
			TagHistory struct {
				PermissionsFiltered bool
				Entries             []struct {
					Name, ValidFrom  string
					ValidTo, EventID *string
					By               *string
					Field            *string
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	minute := func(s string) string {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("time %q: %v", s, err)
		}
		return fmt.Sprint((graph.Millis(v) - t0) / 60_000)
	}
	var b strings.Builder
	ids := map[string]bool{}
	for _, e := range a.Job.TagHistory.Entries {
		to := "now"
		if e.ValidTo != nil {
			to = minute(*e.ValidTo)
		}
		if e.EventID == nil || e.By == nil || e.Field != nil {
			t.Errorf("entry %s: eventId %v, by %v, field %v: want an event, a principal and no field", e.Name, e.EventID, e.By, e.Field)
			continue
		}
		ids[*e.EventID] = true
		fmt.Fprintf(&b, "%s [%s,%s) by %s; ", e.Name, minute(e.ValidFrom), to, strings.TrimPrefix(*e.By, fx+"-"))
	}
	if len(ids) != len(a.Job.TagHistory.Entries) {
		t.Errorf("each interval was set by its own event: %s", raw)
	}
	var tags []string
	for _, tg := range a.Job.Tags {
		tags = append(tags, tg.Name)
	}
	fmt.Fprintf(&b, "tags %v", tags)
	return b.String(), string(raw)
}

// The upgrade from projection version 8 with a graph version 8 really wrote: testdata/upgrade-v8 holds what
// version 8's binary (1b524b6, main when version 9 began) wrote and answered for upgrade-v7's world plus job
// tags facets on tag_history_job sent t1 team=crm (minute 160), t3 team=crm (164), t2 team=sales (162, late), and
// team=crm again (166) (testdata/upgrade-v8/README.md). Version 8 kept the latest facet only; version 9 (ADR
// 0090) keeps the job tag log and its history, filled by the upgrade from the archive: team=crm [160,162) and
// [164,now), team=sales [162,164), each naming its event and the admin, as in-order replay gives. The upgrade
// keeps every node, id and other history (the upgrade-v2 answers), and gives the graph version 9 projects from the
// archive into an empty database.
func TestUpgradeAGraphWrittenByProjectionVersion8(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v8 := readFixtureDir(t, fixtureDirV8)
	fx := v8.Namespace

	eraseFixture(t, store, g, v8)
	loadV1Graph(t, store, g)
	if w := writtenBy(t, store, fx); w["8"] == 0 || w[project.NormVersion] != 0 {
		t.Fatalf("the fixture is not a version-8 graph: nodes by projection version %v", w)
	}
	api := serveFixtureAPI(t, fx)
	checkV3Answers(t, api, v8)
	before := evidenceAnswers(t, api, v8)
	t0 := graph.Millis(v8.World.T0)
	if got, raw := jobTagHistoryAnswer(t, api, fx, t0); got != "tags [team=crm]" {
		t.Fatalf("version 8's graph has a job tag history: %s\n%s", got, raw)
	}

	upgradeKeepingAnswers(t, api, v8, fixtureDirV8, before, project.UpgradeNoteV9+": 2 jobs") // tagged_job and tag_history_job
	const want = "team=crm [160,162) by admin; team=crm [164,now) by admin; team=sales [162,164) by admin; tags [team=crm]"
	got, upgradedAnswer := jobTagHistoryAnswer(t, api, fx, t0)
	if got != want {
		t.Errorf("upgraded: tag_history_job's tag history: %s\nwant %s\n%s", got, want, upgradedAnswer)
	}
	if got := fixtureJobTags(t, store, fx); got != `[]` { // ADR 0086, kept: tagged_job's empty facet cleared them
		t.Errorf("upgraded: tagged_job's job tags %v, want none ([])", got)
	}
	upgraded := comparableDump(dumpFixture(t, store, fx))

	// The graph version 9 projects from the same archive, from nothing.
	replayFromNothing(t, store, g, v8, fixtureDirV8, "8")
	checkV3Answers(t, api, v8)
	if _, freshAnswer := jobTagHistoryAnswer(t, api, fx, t0); freshAnswer != upgradedAnswer {
		t.Errorf("Job.tagHistory upgraded:\n%s\nreplayed:\n%s", upgradedAnswer, freshAnswer)
	}
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-8 graph differs from a version-9 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	eraseFixture(t, store, g, v8)
}
