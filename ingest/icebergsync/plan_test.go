package icebergsync

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
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
