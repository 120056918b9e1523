package project

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
)

// icebergSyncEvents are the catalog sync's events for one table over two syncs, planned by icebergsync.Plan and
// decoded by the real decoder: sync 1 sees schema 0 (1 id, 2 customer, 3 amount) and snapshot 101; sync 2 sees
// schema 1 (2 renamed customer_name, 3 amount dropped, 6 amount added) and snapshot 102.
func icebergSyncEvents(s *scen, cat icebergsync.Catalog) []olevent.Event {
	s.t.Helper()
	long := func(id int, name string) icebergrest.Field {
		return icebergrest.Field{ID: id, Name: name, Type: icebergrest.Type{Primitive: "long"}}
	}
	zero, one := 0, 1
	u := uuid.NewSHA1(uuid.NameSpaceURL, []byte(s.ns+"/table")).String()
	s0 := icebergrest.Schema{SchemaID: 0, Fields: []icebergrest.Field{long(1, "id"), long(2, "customer"), long(3, "amount")}}
	s1 := icebergrest.Schema{SchemaID: 1, Fields: []icebergrest.Field{long(1, "id"), long(2, "customer_name"), long(6, "amount")}}
	snap101 := icebergrest.Snapshot{SnapshotID: "101", TimestampMs: s.ms(10), SchemaID: &zero,
		Summary: map[string]string{"operation": "append"}}
	parent := snap101.SnapshotID
	snap102 := icebergrest.Snapshot{SnapshotID: "102", ParentSnapshotID: &parent, TimestampMs: s.ms(30), SchemaID: &one,
		Summary: map[string]string{"operation": "overwrite"}}
	table := func(loc string, updated int64, cur int, schemas []icebergrest.Schema, snaps []icebergrest.Snapshot) icebergsync.TableState {
		return icebergsync.TableState{Ident: icebergrest.TableIdent{Namespace: icebergrest.Namespace{"db"}, Name: "t"},
			Result: &icebergrest.LoadTableResult{MetadataLocation: loc, Metadata: icebergrest.TableMetadata{
				TableUUID: u, LastUpdatedMs: updated, CurrentSchemaID: cur, Schemas: schemas, Snapshots: snaps}}}
	}
	first, _ := icebergsync.Plan(cat, icebergsync.ScanResult{Tables: []icebergsync.TableState{
		table("m1", s.ms(10), 0, []icebergrest.Schema{s0}, []icebergrest.Snapshot{snap101})}}, nil, nil, s.at(20))
	known := map[string]icebergsync.Known{u: {UUID: u, Name: "db.t", MetadataLocation: "m1",
		Versions: map[string]bool{"101": true}, VersionSchemas: map[string]bool{"101": true}, Schemas: map[string]bool{"0": true}}}
	second, _ := icebergsync.Plan(cat, icebergsync.ScanResult{Tables: []icebergsync.TableState{
		table("m2", s.ms(30), 1, []icebergrest.Schema{s0, s1}, []icebergrest.Snapshot{snap101, snap102})}}, known, nil, s.at(40))
	raws := append(first, second...)
	if len(raws) != 4 {
		s.t.Fatalf("planned %d events, want state, snap 101, state, snap 102", len(raws))
	}
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), func() time.Time { return s.at(60) })
	if err != nil {
		s.t.Fatal(err)
	}
	out := make([]olevent.Event, 0, len(raws))
	for i, raw := range raws {
		ev, err := dec.Decode(raw)
		if err != nil {
			s.t.Fatalf("sync event %d: %v\n%s", i, err, raw)
		}
		ev.ID = fmt.Sprintf("%s-sync%d", s.ns, i) // the scenario's own ids, so wipe removes their Event nodes
		out = append(out, ev)
	}
	if out[2].Dataset == nil || out[2].Dataset.Iceberg == nil || out[2].Dataset.Iceberg.Schemas["1"]["amount"] != "6" ||
		out[1].Dataset.Iceberg.Snapshot == nil || out[1].Dataset.Iceberg.Snapshot.SchemaID != "0" {
		s.t.Fatalf("decoded sync events lack the schemas or the snapshot's schema id: %+v", out[2].Dataset)
	}
	return out
}

// Projection version 7 (ADR 0065) against the real Neo4j: a run that read an older Iceberg snapshot has its
// column-lineage references resolved through that snapshot's schema: `amount` is the dropped field 3, not the
// field 6 that is called amount now, and `customer` is field 2 (now customer_name). The run's event before the
// sync events that record the snapshot and the schemas, after them, or delivered twice, gives the same graph.
func TestScenarioColumnLineageThroughTheReadSnapshotsSchema(t *testing.T) {
	s := newScen(t)
	cat := icebergsync.Catalog{Name: s.ns + "-lake", Namespace: s.ns + "-http://cat:8181"}
	sync := icebergSyncEvents(s, cat)
	in := olevent.Dataset{Namespace: cat.Namespace, Name: "db.t", Version: "101"}
	out := s.colOut("report", nil)
	out.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{
		"amount":   {{Namespace: cat.Namespace, Name: "db.t", Field: "amount", Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}}},
		"customer": {{Namespace: cat.Namespace, Name: "db.t", Field: "customer", Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}}},
	}}
	run := []olevent.Event{
		s.runEv("rs", olevent.TypeStart, 50, "report", "r1", []olevent.Dataset{in}, nil),
		s.runEv("rc", olevent.TypeComplete, 55, "report", "r1", []olevent.Dataset{in}, []olevent.Dataset{out}),
	}
	// edges: each column edge into report as "fieldId:path(current) -> out path", with the source Field's key.
	edges := func() string {
		rows := s.query(`MATCH (:Dataset {namespace: $ns, name: 'db.t'})-[:HAS_FIELD]->(f:Field)-[c:COLUMN_FEEDS]->(o:Field)
			RETURN f.fieldId AS id, f.path AS path, f.key AS key, o.path AS out ORDER BY out`, map[string]any{"ns": cat.Namespace})
		var b strings.Builder
		for _, r := range rows {
			fmt.Fprintf(&b, "%v:%v->%v key=%v\n", r["id"], r["path"], r["out"], r["key"])
		}
		return b.String()
	}
	wipe := func() {
		s.wipe()
		s.query(`MATCH (n:DatasetName {namespace: $u}) DETACH DELETE n`, map[string]any{"u": cat.UUIDNamespace()})
	}

	// the sync first, then the run
	s.apply(sync...)
	s.apply(run...)
	want, wantDump := edges(), s.dump()
	if !strings.Contains(want, "3:amount->amount ") || !strings.Contains(want, "2:customer_name->customer ") ||
		strings.Count(want, "\n") != 2 {
		t.Fatalf("sync then run: column edges\n%swant amount from field 3 (dropped) and customer from field 2\n%v\n%v", want,
			s.query(`MATCH (d:Dataset {namespace: $ns}) OPTIONAL MATCH (v:DatasetVersion)-[:VERSION_OF]->(d)
				RETURN d.key AS k, d.icebergSchemas AS ice, v.version AS v, v.schemaId AS sid`, map[string]any{"ns": cat.Namespace}),
			s.query(`MATCH (r:Run)-[x:READ]->(d:Dataset) WHERE d.namespace = $ns RETURN x.datasetVersion AS v, d.key AS k`, map[string]any{"ns": cat.Namespace}))
	}
	if n := s.one(`MATCH (:Dataset {namespace: $ns, name: 'db.t'})-[:HAS_FIELD]->(f:Field {fieldId: '3'})
		RETURN count(f) AS n, max(f.validTo) AS to`, map[string]any{"ns": cat.Namespace}); n["n"] != int64(1) || n["to"] != s.ms(30) {
		t.Fatalf("field 3's history: %v, want one, closed at the second sync's schema", n)
	}

	orders := []struct {
		name  string
		apply func()
	}{
		{"run before the sync", func() { s.apply(run...); s.apply(sync...) }},
		{"run between the syncs", func() { s.apply(sync[:2]...); s.apply(run...); s.apply(sync[2:]...) }},
		{"snapshot before its schemas", func() {
			s.apply(run...)
			s.apply(sync[1], sync[3])
			s.apply(sync[0], sync[2])
		}},
		{"delivered twice", func() {
			s.apply(run...)
			s.apply(sync...)
			s.apply(run...)
			s.apply(sync[1], sync[2])
		}},
	}
	for _, o := range orders {
		wipe()
		o.apply()
		if got := edges(); got != want {
			t.Fatalf("%s: column edges\n%swant\n%s", o.name, got, want)
		}
		if got := s.dump(); got != wantDump {
			t.Fatalf("%s: graph differs:\n%s", o.name, diffLines(wantDump, got))
		}
	}
}
