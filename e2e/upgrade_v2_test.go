package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/internal/testenv"
)

// specPorts are the default ports OpenLineage's naming spec writes for the fixtures' schemes: the test's own
// statement of what version 3 answers (docs/adr/0026-identity-in-answers.md), not a call into the normaliser.
var specPorts = map[string]string{"postgres": "5432", "mysql": "3306", "hive": "9083", "hdfs": "8020", "kafka": "9092"}

// specForm is a namespace an earlier version answered (postgres://db) in the spec's form (postgres://db:5432).
func specForm(ns string) string {
	scheme, rest, ok := strings.Cut(ns, "://")
	port, known := specPorts[scheme]
	if !ok || !known {
		return ns
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	hosts := strings.Split(authority, ",")
	for i, h := range hosts {
		if !strings.Contains(h, ":") {
			hosts[i] = h + ":" + port
		}
	}
	return scheme + "://" + strings.Join(hosts, ",") + path
}

// inSpecForm copies a GraphQL answer with every namespace in the spec's form.
func inSpecForm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "namespace" || k == "currentNamespace") {
				out[k] = specForm(s)
			} else {
				out[k] = inSpecForm(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inSpecForm(e)
		}
		return out
	}
	return v
}

// The upgrade from projection version 2 with a graph version 2 really wrote: testdata/upgrade-v2 holds what
// version 2's binary (6463f7a) wrote and answered for the upgrade-v1 world plus the identities version 3 stores
// in another form (postgres, hive, mysql, hdfs and kafka namespaces sent with and without their default port, a
// rename, a symlink, an unresolved symlink, a DatasetEvent, an owned set recorded without the port, mixed-case
// Snowflake and Hive names, a grant made through the API on a portless namespace). After `headwater upgrade`
// every dataset, field, job and run keeps its id and history; answers name datasets in the spec's form
// (postgres://...:5432); the forms version 2 answered still find them; search ignores case; the API-granted
// reader still sees what it saw; and the graph is the one version 3 projects from the archive into an empty
// database. Replaying the archive without the upgrade does not give that graph.
func TestUpgradeAGraphWrittenByProjectionVersion2(t *testing.T) {
	lockFixture(t)
	store := testenv.Store(t)
	g, v2 := readFixtureDir(t, fixtureDirV2)
	fx := v2.Namespace

	eraseFixture(t, store, g, v2)
	loadV1Graph(t, store, g)
	out := runOnce(t, "upgrade", "--dir="+copyArchiveDir(t, fixtureDirV2), "--namespace-prefix="+fx+"-")
	// at least the reader's grant is re-stated (the shared database may also hold the generator's policy-file grants)
	if !strings.Contains(out, "rewrote the identities") || !strings.Contains(out, "replayed") || strings.Contains(out, " 0 grants") {
		t.Fatalf("upgrade output:\n%s", out)
	}
	upgraded := comparableDump(dumpFixture(t, store, fx))

	api := serveFixtureAPI(t, fx)
	// Every dataset, asked as version 2 answered it (no port): the same id, fields (ids, intervals), rename and
	// symlink resolution; only the namespaces are in the spec's form now.
	for _, d := range v2.Datasets {
		got := gqlOK(t, api, token, upgradeDatasetQuery, map[string]any{"ns": d.Ask[0], "name": d.Ask[1]})["dataset"]
		if d.Answer == nil { // written only by the event version 1 dropped (the upgrade-v1 world); version 2 projected it
			continue
		}
		if want := inSpecForm(d.Answer); !reflect.DeepEqual(got, want) {
			t.Errorf("dataset %v:\nversion 2 (in the spec's form): %v\nupgraded: %v", d.Ask, want, got)
		}
		// ... and the spec's form finds the same dataset.
		if got := gqlOK(t, api, token, `query($ns: String!, $name: String!) { dataset(namespace: $ns, name: $name) { id namespace } }`,
			map[string]any{"ns": specForm(d.Ask[0]), "name": d.Ask[1]})["dataset"]; got == nil || got.(map[string]any)["id"] != d.Answer["id"] {
			t.Errorf("dataset %s %s: %v, want id %v", specForm(d.Ask[0]), d.Ask[1], got, d.Answer["id"])
		}
	}
	wh := gqlOK(t, api, token, upgradeDatasetQuery, map[string]any{"ns": "postgres://" + fx + "-warehouse", "name": "shop.public.Customers"})["dataset"].(map[string]any)
	if wh["namespace"] != "postgres://"+fx+"-warehouse:5432" {
		t.Errorf("the warehouse is answered as %v, want the spec's postgres://%s-warehouse:5432", wh["namespace"], fx)
	}
	// Jobs and runs (ids, versions, states, events, outputs) as version 2 answered them.
	for _, j := range v2.Jobs {
		got := gqlOK(t, api, token, upgradeJobQuery, map[string]any{"ns": j.Ask[0], "name": j.Ask[1]})["job"]
		if want := inSpecForm(j.Answer); !reflect.DeepEqual(got, want) {
			t.Errorf("job %v:\nversion 2: %v\nupgraded:  %v", j.Ask, want, got)
		}
	}
	// Column lineage into the hive table, from mysql, under the same ids.
	lin := gqlOK(t, api, token, upgradeLineageQuery, map[string]any{"ns": "hive://" + fx + "-metastore:9083",
		"name": "default.orders_" + strings.ToLower(strings.ReplaceAll(fx, "-", "_"))})["lineage"].(map[string]any)
	if w, g := edgeSet(v2.IdentityLineage), edgeSet(lin); !reflect.DeepEqual(w, g) || len(w) == 0 {
		t.Errorf("column lineage of the hive table:\nversion 2: %v\nupgraded:  %v", w, g)
	}
	checkSearchIgnoresCase(t, api, fx, v2)
	// The reader's grant was made through the API on postgres://<fx>-warehouse:5432, which version 2 stored as
	// postgres://<fx>-warehouse: re-stated by the upgrade, it still covers the warehouse.
	reader := fixtureToken(t, v2.Principals["reader"])
	got := gqlOK(t, api, reader, upgradeDatasetQuery, map[string]any{"ns": "postgres://" + fx + "-warehouse", "name": "shop.public.Customers"})["dataset"]
	if v2.ReaderDataset == nil || !reflect.DeepEqual(got, inSpecForm(v2.ReaderDataset)) {
		t.Errorf("the API-granted reader after the upgrade: %v, version 2 answered %v", got, v2.ReaderDataset)
	}

	// The graph version 3 projects from the same archive, from nothing.
	eraseFixture(t, store, g, v2)
	runOnce(t, "replay", "--dir="+copyArchiveDir(t, fixtureDirV2))
	fresh := comparableDump(dumpFixture(t, store, fx))
	if upgraded != fresh {
		t.Errorf("the upgraded version-2 graph differs from a version-3 projection of its archive:\n%s", diff(upgraded, fresh))
	}
	for _, w := range []string{`namespace="postgres://` + fx + `-warehouse:5432"`, `namespace="hdfs://` + fx + `-nn:8020"`,
		`subjectNamespace="postgres://` + fx + `-warehouse:5432"`, `description="the owner's words"`} {
		if !strings.Contains(fresh, w) {
			t.Errorf("the version-3 projection of the archive lacks %s", w)
		}
	}

	// The control: replaying the archive over version 2's graph without the upgrade does not give that graph.
	eraseFixture(t, store, g, v2)
	loadV1Graph(t, store, g)
	runOnce(t, "replay", "--dir="+copyArchiveDir(t, fixtureDirV2))
	if skipped := comparableDump(dumpFixture(t, store, fx)); skipped == fresh {
		t.Error("replay without the upgrade gave the version-3 graph: the test cannot tell an upgraded graph")
	}
	eraseFixture(t, store, g, v2)
}

// checkSearchIgnoresCase: version 2 searched case-sensitively (each spelling found one of the hive and Snowflake
// tables, or none); version 3 finds both for every spelling, with the ids version 2 answered.
func checkSearchIgnoresCase(t *testing.T, api, fx string, v2 *v1Answers) {
	t.Helper()
	ids := map[string]bool{}
	for q, a := range v2.Search {
		for _, n := range a["nodes"].([]any) {
			ids[n.(map[string]any)["id"].(string)] = true
		}
		if len(a["nodes"].([]any)) > 1 {
			t.Fatalf("version 2's search %q found %d: the fixture does not show case-sensitive search", q, len(a["nodes"].([]any)))
		}
	}
	if len(ids) != 2 || len(v2.Search) != 3 {
		t.Fatalf("the fixture's searches found %v", ids)
	}
	for q := range v2.Search {
		d := gqlOK(t, api, token, `query($q: String!) { search(query: $q, first: 50) { nodes { ... on Dataset { id namespace name } } } }`,
			map[string]any{"q": q})["search"].(map[string]any)
		var got []string
		for _, n := range d["nodes"].([]any) {
			if m := n.(map[string]any); m["id"] != nil {
				got = append(got, fmt.Sprint(m["id"]))
			}
		}
		sort.Strings(got)
		var want []string
		for id := range ids {
			want = append(want, id)
		}
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("search(%q): %v, want the hive and the Snowflake table %v", q, got, want)
		}
	}
}
