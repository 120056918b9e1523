package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
)

// scansWorld is -world=v7: the v6 world and a time-travel read whose scanned snapshot version 7 did not read
// (../../upgrade-v7/README.md, ADR 0084): the catalog sync's events (planned by icebergsync.Plan, as `headwater
// catalog sync` sends them) record table db.orders of catalog <fx>-lake with snapshot S1 under schema 0 (1 id,
// 2 customer, 3 amount) at minute 130, then schema 1 (2 renamed customer_name, 3 amount dropped, 6 amount
// re-added) and snapshot S2 at minute 134; at minute 140 a Spark-shaped run reads it `VERSION AS OF S1` the way
// OpenLineage 1.53.0 reports it: version.datasetVersion S2 (the current snapshot) and
// inputFacets.icebergScanReport.snapshotId S1 as a JSON double, with column lineage naming customer and amount.
// Version 7 names S2 on the READ and puts amount's edge on field 6; version 8 names S1 and field 3. And job
// tagged_job gets a tags facet (team=finance, nightly) at minute 150 and an empty one at 152, which version 7
// ignored and version 8 reads as clearing them.
var scansWorld bool

// The snapshot ids real Spark produced in TestSparkReadsAnEvolvedIcebergTableAtTwoSnapshots (ADR 0065's
// amendment), and S1 as the Spark integration wrote it.
const (
	scanS1, scanS2 = "8175655899474428532", "3671928165965023760"
	scanS1Double   = "8.1756558994744289E18"
)

func (w *world) scanCatalog() icebergsync.Catalog {
	return icebergsync.Catalog{Name: w.fx + "-lake", Namespace: "http://" + w.fx + "-cat:8181"}
}

func (w *world) scanPosts() ([]post, error) {
	cat := w.scanCatalog()
	ms := func(min int) int64 { return w.t0.Add(time.Duration(min) * time.Minute).UnixMilli() }
	long := func(id int, name string) icebergrest.Field {
		return icebergrest.Field{ID: id, Name: name, Type: icebergrest.Type{Primitive: "long"}}
	}
	zero, one := 0, 1
	u := uuid.NewSHA1(uuid.NameSpaceURL, []byte(w.fx+"/orders")).String()
	s0 := icebergrest.Schema{SchemaID: 0, Fields: []icebergrest.Field{long(1, "id"), long(2, "customer"), long(3, "amount")}}
	s1 := icebergrest.Schema{SchemaID: 1, Fields: []icebergrest.Field{long(1, "id"), long(2, "customer_name"), long(6, "amount")}}
	snap1 := icebergrest.Snapshot{SnapshotID: scanS1, TimestampMs: ms(130), SchemaID: &zero, Summary: map[string]string{"operation": "append"}}
	parent := icebergrest.SnapshotID(scanS1)
	snap2 := icebergrest.Snapshot{SnapshotID: scanS2, ParentSnapshotID: &parent, TimestampMs: ms(134), SchemaID: &one,
		Summary: map[string]string{"operation": "append"}}
	table := func(loc string, updated int64, cur int, schemas []icebergrest.Schema, snaps []icebergrest.Snapshot) icebergsync.TableState {
		return icebergsync.TableState{Ident: icebergrest.TableIdent{Namespace: icebergrest.Namespace{"db"}, Name: "orders"},
			Result: &icebergrest.LoadTableResult{MetadataLocation: loc, Metadata: icebergrest.TableMetadata{
				TableUUID: u, LastUpdatedMs: updated, CurrentSchemaID: cur, Schemas: schemas, Snapshots: snaps}}}
	}
	first, _ := icebergsync.Plan(cat, icebergsync.ScanResult{Tables: []icebergsync.TableState{
		table("s3://"+w.fx+"-lake/db/orders/metadata/1.json", ms(130), 0, []icebergrest.Schema{s0}, []icebergrest.Snapshot{snap1})}},
		nil, nil, w.t0.Add(131*time.Minute))
	known := map[string]icebergsync.Known{u: {UUID: u, Name: "db.orders", MetadataLocation: "s3://" + w.fx + "-lake/db/orders/metadata/1.json",
		Versions: map[string]bool{scanS1: true}, VersionSchemas: map[string]bool{scanS1: true}, Schemas: map[string]bool{"0": true}}}
	second, _ := icebergsync.Plan(cat, icebergsync.ScanResult{Tables: []icebergsync.TableState{
		table("s3://"+w.fx+"-lake/db/orders/metadata/2.json", ms(134), 1, []icebergrest.Schema{s0, s1}, []icebergrest.Snapshot{snap1, snap2})}},
		known, nil, w.t0.Add(135*time.Minute))
	if len(first) != 2 || len(second) != 2 {
		return nil, fmt.Errorf("planned %d and %d sync events, want state and snapshot each", len(first), len(second))
	}
	var out []post
	for i, raw := range append(first, second...) {
		out = append(out, post{"admin", raw, fmt.Sprintf("catalog sync event %d", i), http.StatusAccepted})
	}
	lake, jobs := "s3://"+w.fx+"-lake", w.fx+"-jobs"
	in := fmt.Sprintf(`{"namespace":%q,"name":"db.orders","facets":{%s},"inputFacets":{%s}}`, cat.Namespace,
		facet("version", fmt.Sprintf(`"datasetVersion":%q`, scanS2)),
		facet("icebergScanReport", fmt.Sprintf(`"snapshotId":%s,"tableName":"lake.db.orders","schemaId":0`, scanS1Double)))
	col := func(field string) string {
		return fmt.Sprintf(`%q:{"inputFields":[{"namespace":%q,"name":"db.orders","field":%q,"transformations":[{"type":"DIRECT","subtype":"IDENTITY"}]}]}`,
			field, cat.Namespace, field)
	}
	outDS := ds(lake, "export/orders_s1", schema("customer:text", "amount:bigint")+","+
		facet("columnLineage", `"fields":{`+col("customer")+","+col("amount")+`}`))
	out = append(out,
		post{"admin", w.runEvent("", "START", 140, jobs, "read_orders_s1", w.run["scan"], "", in, ""), "time-travel read start", http.StatusAccepted},
		post{"admin", w.runEvent("", "COMPLETE", 141, jobs, "read_orders_s1", w.run["scan"], "", in, outDS), "time-travel read complete", http.StatusAccepted})
	// A job tags facet, then an empty one (ADR 0086): version 7 kept the tags, version 8 clears them at minute 152.
	jobEvent := func(min int, tags string) []byte {
		return []byte(fmt.Sprintf(`{"eventTime":%q,"producer":%q,"schemaURL":"%sJobEvent","job":{"namespace":%q,"name":"tagged_job","facets":{%s}}}`,
			w.at(min), producer, schemaURL, jobs, tagsFacet(tags)))
	}
	out = append(out,
		post{"admin", jobEvent(150, `{"key":"team","value":"finance","source":"airflow"},{"key":"nightly","source":"airflow"}`), "job tags", http.StatusAccepted},
		post{"admin", jobEvent(152, ``), "empty job tags facet", http.StatusAccepted})
	return out, nil
}
