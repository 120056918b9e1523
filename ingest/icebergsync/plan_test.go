package icebergsync

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// planTable is a loaded table for Plan: uuid, metadata location, snapshot ids (each the parent of the next).
func planTable(ns, name, u, loc string, snaps ...string) TableState {
	md := icebergrest.TableMetadata{TableUUID: u, LastUpdatedMs: 1_000, CurrentSchemaID: 0,
		Schemas: []icebergrest.Schema{{SchemaID: 0, Fields: []icebergrest.Field{{ID: 1, Name: "id", Type: icebergrest.Type{Primitive: "long"}}}}}}
	var parent *icebergrest.SnapshotID
	for i, s := range snaps {
		id := icebergrest.SnapshotID(s)
		md.Snapshots = append(md.Snapshots, icebergrest.Snapshot{SnapshotID: id, ParentSnapshotID: parent, TimestampMs: int64(100 * (i + 1)),
			Summary: map[string]string{"operation": "append"}})
		parent = &id
	}
	return TableState{Ident: icebergrest.TableIdent{Namespace: icebergrest.Namespace{ns}, Name: name},
		Result: &icebergrest.LoadTableResult{MetadataLocation: loc, Metadata: md}}
}

// kinds renders planned events as "<name>:<what>" (what: state, snap=<id>, RENAME<-<old>, DROP).
func kinds(t *testing.T, evs []json.RawMessage) string {
	t.Helper()
	var out []string
	for _, raw := range evs {
		var ev struct {
			Dataset struct {
				Name   string
				Facets map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		f := ev.Dataset.Facets
		var lc struct {
			State string                `json:"lifecycleStateChange"`
			Prev  struct{ Name string } `json:"previousIdentifier"`
		}
		var ver struct{ DatasetVersion string }
		_ = json.Unmarshal(f["lifecycleStateChange"], &lc)
		_ = json.Unmarshal(f["version"], &ver)
		what := "state"
		switch {
		case lc.State == "RENAME":
			what = "RENAME<-" + lc.Prev.Name
		case lc.State != "":
			what = lc.State
		case ver.DatasetVersion != "":
			what = "snap=" + ver.DatasetVersion
		}
		out = append(out, ev.Dataset.Name+":"+what)
	}
	return strings.Join(out, " ")
}

// Plan is the sync's decision, a pure function of a complete scan and what the graph holds (ADR 0041).
func TestPlanWritesOnlyWhatChanged(t *testing.T) {
	cat := Catalog{Name: "lake", Namespace: "http://cat:8181"}
	now := time.UnixMilli(5_000)
	known := func(name, loc string, dropped bool, versions ...string) Known {
		k := Known{UUID: "u1", Name: name, MetadataLocation: loc, Dropped: dropped, Versions: map[string]bool{},
			Schemas: map[string]bool{"0": true}}
		for _, v := range versions {
			k.Versions[v] = true
		}
		return k
	}
	cases := []struct {
		name  string
		scan  ScanResult
		known map[string]Known
		root  icebergrest.Namespace
		want  string
	}{
		{"new table: state and every snapshot", ScanResult{Tables: []TableState{planTable("db", "t", "U1", "m1", "1", "2")}}, nil, nil,
			"db.t:state db.t:snap=1 db.t:snap=2"},
		{"unchanged: nothing", ScanResult{Tables: []TableState{planTable("db", "t", "u1", "m1", "1")}},
			map[string]Known{"u1": known("db.t", "m1", false, "1")}, nil, ""},
		{"appended: state and the new snapshot only", ScanResult{Tables: []TableState{planTable("db", "t", "u1", "m2", "1", "2")}},
			map[string]Known{"u1": known("db.t", "m1", false, "1")}, nil, "db.t:state db.t:snap=2"},
		{"expired snapshot: nothing erased", ScanResult{Tables: []TableState{planTable("db", "t", "u1", "m3", "2")}},
			map[string]Known{"u1": known("db.t", "m2", false, "1", "2")}, nil, "db.t:state"},
		{"renamed: a RENAME only", ScanResult{Tables: []TableState{planTable("db", "t2", "u1", "m1", "1")}},
			map[string]Known{"u1": known("db.t", "m1", false, "1")}, nil, "db.t2:RENAME<-db.t"},
		{"renamed and appended: the other events name the old name", ScanResult{Tables: []TableState{planTable("db", "t2", "u1", "m2", "1", "2")}},
			map[string]Known{"u1": known("db.t", "m1", false, "1")}, nil, "db.t2:RENAME<-db.t db.t:state db.t:snap=2"},
		{"gone: a DROP", ScanResult{}, map[string]Known{"u1": known("db.t", "m1", false)}, nil, "db.t:DROP"},
		{"gone outside the root: nothing", ScanResult{}, map[string]Known{"u1": known("db.t", "m1", false)}, icebergrest.Namespace{"other"}, ""},
		{"a table vanished during the scan: no DROP", ScanResult{Vanished: []icebergrest.TableIdent{{Namespace: icebergrest.Namespace{"db"}, Name: "x"}}},
			map[string]Known{"u1": known("db.t", "m1", false)}, nil, ""},
		{"dropped earlier: no second DROP", ScanResult{}, map[string]Known{"u1": known("db.t", "m1", true)}, nil, ""},
		{"back after a drop: its state again", ScanResult{Tables: []TableState{planTable("db", "t", "u1", "m1")}},
			map[string]Known{"u1": known("db.t", "m1", true)}, nil, "db.t:CREATE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, _ := Plan(cat, c.scan, c.known, c.root, now)
			if got := kinds(t, evs); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// The state event carries the schema as the schema facet nests it and each path's field id.
func TestPlanStateCarriesFieldIDsAndTheUUID(t *testing.T) {
	tbl := planTable("db", "t", "u1", "m1")
	tbl.Result.Metadata.Schemas[0].Fields = append(tbl.Result.Metadata.Schemas[0].Fields, icebergrest.Field{ID: 2, Name: "ship",
		Type: icebergrest.Type{Struct: []icebergrest.Field{{ID: 3, Name: "city", Type: icebergrest.Type{Primitive: "string"}}}}})
	evs, rep := Plan(Catalog{Name: "Lake", Namespace: "http://cat:8181"}, ScanResult{Tables: []TableState{tbl}}, nil, nil, time.UnixMilli(5_000))
	if len(evs) != 1 || rep.New != 1 {
		t.Fatalf("events %d, report %+v", len(evs), rep)
	}
	s := string(evs[0])
	for _, want := range []string{`"fieldIds":{"id":1,"ship":2,"ship.city":3}`, `"schemas":{"0":{"id":1,"ship":2,"ship.city":3}}`, `"name":"u1","namespace":"iceberg://lake"`,
		`"fields":[{"name":"city","type":"string"}]`, `"eventTime":"1970-01-01T00:00:01Z"`} {
		if !strings.Contains(s, want) {
			t.Errorf("state event lacks %s:\n%s", want, s)
		}
	}
}

// A table a projection version 6 sync recorded (no schema ids, versions without a schema id) is sent again, unchanged
// metadata or not: its state with every schema, and each snapshot the metadata names a schema id for; a table whose
// schemas and snapshots' schema ids are recorded gives nothing (ADR 0065).
func TestPlanSendsTheSchemasAVersion6SyncDidNotRecord(t *testing.T) {
	cat := Catalog{Name: "lake", Namespace: "http://cat:8181"}
	tbl := planTable("db", "t", "u1", "m1", "1", "2")
	md := &tbl.Result.Metadata
	md.Schemas = append(md.Schemas, icebergrest.Schema{SchemaID: 1, Fields: []icebergrest.Field{{ID: 1, Name: "key", Type: icebergrest.Type{Primitive: "long"}}}})
	md.CurrentSchemaID = 1
	zero, one := 0, 1
	md.Snapshots[0].SchemaID, md.Snapshots[1].SchemaID = &zero, &one
	v6 := Known{UUID: "u1", Name: "db.t", MetadataLocation: "m1", Versions: map[string]bool{"1": true, "2": true}}
	evs, _ := Plan(cat, ScanResult{Tables: []TableState{tbl}}, map[string]Known{"u1": v6}, nil, time.UnixMilli(5_000))
	if got := kinds(t, evs); got != "db.t:state db.t:snap=1 db.t:snap=2" {
		t.Fatalf("a version 6 table: %s", got)
	}
	for i, want := range []string{`"schemas":{"0":{"id":1},"1":{"key":1}}`, `"schemaId":0`, `"schemaId":1`} {
		if !strings.Contains(string(evs[i]), want) {
			t.Errorf("event %d lacks %s:\n%s", i, want, evs[i])
		}
	}
	v7 := v6
	v7.Schemas, v7.VersionSchemas = map[string]bool{"0": true, "1": true}, map[string]bool{"1": true, "2": true}
	if evs, _ := Plan(cat, ScanResult{Tables: []TableState{tbl}}, map[string]Known{"u1": v7}, nil, time.UnixMilli(5_000)); len(evs) != 0 {
		t.Errorf("a recorded table: %s", kinds(t, evs))
	}
	v7.Schemas = map[string]bool{"0": true}
	evs, _ = Plan(cat, ScanResult{Tables: []TableState{tbl}}, map[string]Known{"u1": v7}, nil, time.UnixMilli(5_000))
	if got := kinds(t, evs); got != "db.t:state" || !strings.Contains(string(evs[0]), `"schemas":{"1":{"key":1}}`) {
		t.Errorf("schema 1 not recorded: %s %s", got, evs)
	}
}

// Catalog tags (ADR 0075): the table's headwater.tags and headwater.column-tags.<path> properties become the
// standard tags facet on its state event, sent only when they differ from the sync's tags in force (so an
// unchanged table still gives nothing), as the full list (empty when the properties are gone); an entry the sync
// cannot read is a warning, not a failed sync.
func TestPlanSendsCatalogTagsOnlyWhenTheyChange(t *testing.T) {
	cat := Catalog{Name: "lake", Namespace: "http://cat:8181"}
	now := time.UnixMilli(5_000)
	tagged := func(loc string, props map[string]string) TableState {
		tbl := planTable("db", "t", "u1", loc)
		tbl.Result.Metadata.Properties = props
		return tbl
	}
	props := map[string]string{TagsProperty: " tier=gold, pii,, =x, pii", ColumnTagsPrefix + "id": "pii.id", ColumnTagsPrefix + "gone": "pii",
		"write.metadata.metrics.column.id": "full"}
	known := func(loc string, tags ...string) map[string]Known {
		return map[string]Known{"u1": {UUID: "u1", Name: "db.t", MetadataLocation: loc, Versions: map[string]bool{},
			Schemas: map[string]bool{"0": true}, CatalogTags: tags}}
	}
	const full = `"tags":{"_producer":"https://github.com/headwater-data/headwater/ingest/icebergsync","_schemaURL":"https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json",` +
		`"tags":[{"field":"id","key":"pii.id","source":"ICEBERG_CATALOG"},{"key":"pii","source":"ICEBERG_CATALOG"},{"key":"tier","source":"ICEBERG_CATALOG","value":"gold"}]}`
	cases := []struct {
		name  string
		tbl   TableState
		known map[string]Known
		want  string // the events' kinds
		facet string // what the state event's tags facet must be ("-": no tags facet)
		warns int
	}{
		{"new table: its tags", tagged("m1", props), nil, "db.t:state", full, 2},
		{"unchanged, tags in force: nothing", tagged("m1", props), known("m1", "id:pii.id", "pii", "tier=gold"), "", "", 2},
		{"appended, tags in force: state without tags", tagged("m2", props), known("m1", "id:pii.id", "pii", "tier=gold"), "db.t:state", "-", 2},
		{"tags not in force (synced before ADR 0075): state with tags", tagged("m1", props), known("m1"), "db.t:state", full, 2},
		{"a tag changed: the full list", tagged("m2", props), known("m1", "id:pii.id", "pii", "tier=silver"), "db.t:state", full, 2},
		{"properties removed: the empty list", tagged("m2", map[string]string{"write.format.default": "parquet"}), known("m1", "pii"), "db.t:state",
			`"tags":{"_producer":"https://github.com/headwater-data/headwater/ingest/icebergsync","_schemaURL":"https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json","tags":[]}`, 0},
		{"never tagged: no facet", tagged("m2", nil), known("m1"), "db.t:state", "-", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, rep := Plan(cat, ScanResult{Tables: []TableState{c.tbl}}, c.known, nil, now)
			if got := kinds(t, evs); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
			if len(rep.Warnings) != c.warns {
				t.Errorf("warnings %q, want %d", rep.Warnings, c.warns)
			}
			switch {
			case c.facet == "-" && strings.Contains(string(evs[0]), `"tags":{`):
				t.Errorf("a tags facet was sent: %s", evs[0])
			case c.facet != "-" && c.facet != "" && !strings.Contains(string(evs[0]), c.facet):
				t.Errorf("state event lacks %s:\n%s", c.facet, evs[0])
			}
		})
	}
	_, rep := Plan(cat, ScanResult{Tables: []TableState{tagged("m1", props)}}, nil, nil, now)
	for _, want := range []string{`property headwater.column-tags.gone names column "gone", which the current schema does not have`, `entry "=x" has no key`} {
		if !strings.Contains(fmt.Sprint(rep.Warnings), want) {
			t.Errorf("warnings %q lack %s", rep.Warnings, want)
		}
	}
}

// The table's location is a second identifier of its state event, named as Spark's listener names a table it
// reads through the catalog, so such a read lands on the synced table (ADR 0083).
func TestPlanStateNamesTheTablesLocation(t *testing.T) {
	for _, c := range []struct{ loc, ns, name string }{
		{"/warehouse/db/orders", "file", "/warehouse/db/orders"},
		{"file:/warehouse/db/orders/", "file", "/warehouse/db/orders"},
		{"file:///warehouse/db/orders", "file", "/warehouse/db/orders"},
		{"s3://lake/warehouse/db/orders", "s3://lake", "warehouse/db/orders"},
		{"abfss://c@acct.dfs.core.windows.net/db/orders", "abfss://c@acct.dfs.core.windows.net", "db/orders"},
		{"", "", ""}, {"relative/path", "", ""}, {"s3://bucket", "", ""},
	} {
		ns, name, ok := locationName(c.loc)
		if ns != c.ns || name != c.name || ok != (c.ns != "") {
			t.Errorf("locationName(%q) = %q %q %v, want %q %q", c.loc, ns, name, ok, c.ns, c.name)
		}
	}
	tbl := planTable("db", "t", "u1", "m1")
	tbl.Result.Metadata.Location = "s3://lake/db/t"
	evs, _ := Plan(Catalog{Name: "lake", Namespace: "http://cat:8181"}, ScanResult{Tables: []TableState{tbl}}, nil, nil, time.UnixMilli(5_000))
	if want := `{"name":"db/t","namespace":"s3://lake","type":"LOCATION"}`; len(evs) != 1 || !strings.Contains(string(evs[0]), want) {
		t.Errorf("state event lacks %s:\n%s", want, evs)
	}
}

// A table whose catalog name is a metadata table's (table `snapshots` of namespace `db.orders`) is named by its
// location, never by `db.orders.snapshots` (the decoder's name for `db.orders`'s snapshots metadata table, ADR
// 0064): its events carry its catalog name in headwater_iceberg.table, and the next sync knows it by its uuid
// alone (GraphState gives its node's own name as the ref): unchanged gives nothing, a rename keeps the location
// name (no RENAME) and a drop names the location (ADR 0087).
func TestPlanNamesANestedTableWithAMetadataTableNameByItsLocation(t *testing.T) {
	cat := Catalog{Name: "lake", Namespace: "http://cat:8181"}
	now := time.UnixMilli(5_000)
	nested := func(name, loc string, snaps ...string) TableState {
		tbl := planTable("db", name, "u1", loc, snaps...)
		tbl.Ident.Namespace = icebergrest.Namespace{"db", "orders"}
		tbl.Result.Metadata.Location = "/wh/db/orders/" + name
		return tbl
	}
	evs, _ := Plan(cat, ScanResult{Tables: []TableState{nested("snapshots", "m1", "1")}}, nil, nil, now)
	if got := kinds(t, evs); got != "/wh/db/orders/snapshots:state /wh/db/orders/snapshots:snap=1" {
		t.Fatalf("a new nested table named like a metadata table: %s", got)
	}
	for _, e := range evs {
		if s := string(e); !strings.Contains(s, `"namespace":"file"`) || !strings.Contains(s, `"table":"db.orders.snapshots"`) || strings.Contains(s, `"LOCATION"`) {
			t.Errorf("event not named by the location with its catalog name in headwater_iceberg.table (and no location identifier): %s", s)
		}
	}
	// an ordinary nested name keeps the catalog name
	if evs, _ := Plan(cat, ScanResult{Tables: []TableState{nested("lines", "m1")}}, nil, nil, now); kinds(t, evs) != "db.orders.lines:state" {
		t.Errorf("an ordinary nested table: %s", kinds(t, evs))
	}

	k := Known{UUID: "u1", Name: "db.orders.snapshots", MetadataLocation: "m1", Versions: map[string]bool{"1": true},
		Schemas: map[string]bool{"0": true}, RefNamespace: "file", RefName: "/wh/db/orders/snapshots"}
	for _, c := range []struct {
		name string
		scan ScanResult
		want string
	}{
		{"unchanged: nothing", ScanResult{Tables: []TableState{nested("snapshots", "m1", "1")}}, ""},
		{"appended: under the location", ScanResult{Tables: []TableState{nested("snapshots", "m2", "1", "2")}},
			"/wh/db/orders/snapshots:state /wh/db/orders/snapshots:snap=2"},
		{"renamed: the state under the location, no RENAME", ScanResult{Tables: []TableState{nested("snaps", "m1", "1")}},
			"/wh/db/orders/snapshots:state"},
		{"gone: a DROP of the location", ScanResult{}, "/wh/db/orders/snapshots:DROP"},
	} {
		evs, _ := Plan(cat, c.scan, map[string]Known{"u1": k}, nil, now)
		if got := kinds(t, evs); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if c.name == "renamed: the state under the location, no RENAME" && (len(evs) != 1 || !strings.Contains(string(evs[0]), `"table":"db.orders.snaps"`)) {
			t.Errorf("the renamed table's state lacks its new catalog name: %s", evs)
		}
	}
}

// The sync changes only its own tags (ADR 0087): its tags facet keeps every other source's tags in force as they
// are (a tag both list stays the other's), its empty list removes only its own; when another source's facet
// replaced the list after the table's last update, the sync's tags come back dated now, not at the last update.
func TestPlanKeepsOtherSourcesTags(t *testing.T) {
	cat := Catalog{Name: "lake", Namespace: "http://cat:8181"}
	now := time.UnixMilli(9_000_000)
	tbl := func(loc string, props map[string]string) TableState {
		tb := planTable("db", "t", "u1", loc)
		tb.Result.Metadata.Properties = props
		return tb
	}
	dbt := []olevent.Tag{{Key: "certified", Source: "dbt"}, {Key: "pii", Source: "dbt"}}
	known := func(loc string, own ...string) map[string]Known {
		return map[string]Known{"u1": {UUID: "u1", Name: "db.t", MetadataLocation: loc, Versions: map[string]bool{},
			Schemas: map[string]bool{"0": true}, CatalogTags: own, OtherTags: dbt}}
	}
	tagged := map[string]string{TagsProperty: "finance, pii"}
	const both = `"tags":[{"key":"certified","source":"dbt"},{"key":"pii","source":"dbt"},{"key":"finance","source":"ICEBERG_CATALOG"}]`
	cases := []struct {
		name, want, facet string
		tbl               TableState
		known             map[string]Known
		at                string
	}{
		{"tagged in the catalog: the others kept, pii stays dbt's", "db.t:state", both, tbl("m2", tagged), known("m1"), "1970-01-01T00:00:01Z"},
		{"in force (pii is dbt's): nothing", "", "", tbl("m1", tagged), known("m1", "finance"), ""},
		{"displaced by another source's facet: back now", "db.t:state", both, tbl("m1", tagged), known("m1"), "1970-01-01T02:30:00Z"},
		{"removed in the catalog: only the sync's go", "db.t:state", `"tags":[{"key":"certified","source":"dbt"},{"key":"pii","source":"dbt"}]}`,
			tbl("m2", nil), known("m1", "finance"), "1970-01-01T00:00:01Z"},
	}
	for _, c := range cases {
		evs, _ := Plan(cat, ScanResult{Tables: []TableState{c.tbl}}, c.known, nil, now)
		if got := kinds(t, evs); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
			continue
		}
		if c.facet != "" && (!strings.Contains(string(evs[0]), c.facet) || !strings.Contains(string(evs[0]), `"eventTime":"`+c.at+`"`)) {
			t.Errorf("%s: the event lacks %s at %s:\n%s", c.name, c.facet, c.at, evs[0])
		}
	}
}
