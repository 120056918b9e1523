package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 18, "lineage of a Spark job through the REST catalog lands on the synced table node": real Spark 3.5 with
// the OpenLineage listener and iceberg-spark-runtime creates a table in the fixture REST catalog (CTAS) and
// appends to it; the catalog sync then records the table. The table Spark wrote is the synced table (one node:
// the catalog's name, its uuid alias), its last writer is the Spark run, and the snapshot of the append is
// written by that run (its output's version facet names the snapshot id).
func TestSparkThroughTheRESTCatalogLandsOnTheSyncedTable(t *testing.T) {
	home, jars := sparkHome(t)
	p := newProducerRun(t, "sparkrest")
	src, _ := filepath.Abs("testdata/producers/spark")
	copyTree(t, src, p.work)
	events := filepath.Join(p.work, "events.jsonl")
	uri := testenv.IcebergURI()
	db := "hw_sparkrest_" + testenv.Token(4)
	env := []string{"SPARK_LOCAL_IP=127.0.0.1", "PYSPARK_PYTHON=" + filepath.Join(home, "venv", "bin", "python")}
	p.run(t, p.work, env, 0, filepath.Join(home, "venv", "bin", "python"), filepath.Join(p.work, "rest_job.py"),
		p.work, p.url(), token, p.jobNS, events, strings.Join(jars, ","), uri, db)
	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)

	cat := "fx-sparkrest-" + testenv.Token(4)
	summary, _ := icebergSync(t, p.store, p.api, uri, cat, db)
	if !strings.Contains(summary, ": 2 tables,") || !strings.Contains(summary, " 0 dropped") {
		t.Errorf("sync: %q, want the two tables (orders, snapshot_log) and nothing dropped", summary)
	}

	o := &ownTest{t: t, api: p.api}
	v := o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name aliases { namespace kind }
		lastWrittenBy { job { namespace name } }
		versions(first: 10) { nodes { version operation writtenBy { job { namespace } } } } } }`,
		map[string]any{"ns": uri, "n": db + ".orders"})
	b, _ := json.Marshal(v["dataset"])
	var d struct {
		ID, Name string
		Aliases  []struct{ Namespace, Kind string }
		Last     *struct {
			Job struct{ Namespace, Name string }
		} `json:"lastWrittenBy"`
		Versions struct {
			Nodes []struct {
				Version, Operation string
				WrittenBy          []struct{ Job struct{ Namespace string } }
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	uuidBound := false
	for _, a := range d.Aliases {
		uuidBound = uuidBound || a.Namespace == "iceberg://"+cat
	}
	if !uuidBound || d.Last == nil || d.Last.Job.Namespace != p.jobNS {
		t.Fatalf("the synced table %s: %s; want its uuid alias in iceberg://%s and the Spark run of %s as its last writer", db+".orders", b, cat, p.jobNS)
	}
	byRun := 0
	for _, n := range d.Versions.Nodes {
		for _, w := range n.WrittenBy {
			if w.Job.Namespace == p.jobNS {
				byRun++
			}
		}
	}
	if len(d.Versions.Nodes) < 2 || byRun < 1 {
		t.Errorf("the table's snapshots %s: want the CTAS and the append, at least one written by the Spark run", b)
	}
	// no second node for the table under the location Spark may also report it by
	recs, err := p.store.ReadRecords(t.Context(), `MATCH (d:Dataset) WHERE d.name = $name OR d.name ENDS WITH $location
		RETURN d.namespace AS ns, d.name AS n`, map[string]any{"name": db + ".orders", "location": db + "/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("%d nodes for the table, want one: %v", len(recs), recs)
	}
	checkMetadataTableRead(t, o, p, uri, cat, db, d.ID)
}

// checkMetadataTableRead: the job read `lake.<db>.orders.snapshots` into snapshot_log. Spark 3.5 with
// OpenLineage 1.53.0 reports that input under the base table's location (`file`, <warehouse>/<db>/orders), with
// the snapshots table's schema, the table's current snapshot as its version, the `catalog` facet of the REST
// catalog (framework iceberg, metadataUri the catalog URI) and one symlink (<catalog URI>, <db>.orders.snapshots).
// The metadata table is a dataset of its own (ADR 0025, ADR 0064): not the synced table (its own node, no uuid
// alias, not dropped by the sync that does not list it), its columns not the table's, snapshot_log's upstream is
// it and not the table, and no snapshot of the table is written by the job that read its metadata. A second sync
// with nothing changed in the catalog writes nothing.
func checkMetadataTableRead(t *testing.T, o *ownTest, p *producerRun, uri, cat, db, tableID string) {
	t.Helper()
	meta := db + ".orders.snapshots"
	v := o.gql(t, `query($ns: String!, $m: String!, $t: String!) {
		meta: dataset(namespace: $ns, name: $m) { id droppedAt aliases { namespace name } fields { path } }
		table: dataset(namespace: $ns, name: $t) { fields { path } versions(first: 10) { nodes { writtenBy { job { name } } } } } }`,
		map[string]any{"ns": uri, "m": meta, "t": db + ".orders"})
	b, _ := json.Marshal(v)
	var got struct {
		Meta *struct {
			ID        string
			DroppedAt *string
			Aliases   []struct{ Namespace, Name string }
			Fields    []struct{ Path string }
		}
		Table struct {
			Fields   []struct{ Path string }
			Versions struct {
				Nodes []struct {
					WrittenBy []struct{ Job struct{ Name string } }
				}
			}
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Meta == nil || got.Meta.ID == tableID || got.Meta.DroppedAt != nil {
		t.Fatalf("the metadata table %s: %s; want a dataset of its own, not dropped", meta, b)
	}
	for _, a := range got.Meta.Aliases {
		if strings.HasPrefix(a.Namespace, "iceberg://") {
			t.Errorf("the metadata table has the table's uuid alias %v: %s", a, b)
		}
	}
	paths := func(fs []struct{ Path string }) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return strings.Join(out, ",")
	}
	if mp := paths(got.Meta.Fields); !strings.Contains(mp, "snapshot_id") || !strings.Contains(mp, "manifest_list") {
		t.Errorf("the metadata table's fields %s, want the snapshots table's columns", mp)
	}
	if tp := paths(got.Table.Fields); tp != "order_id,amount" && tp != "amount,order_id" {
		t.Errorf("the table's fields %s, want only its own columns (order_id, amount)", tp)
	}
	for _, n := range got.Table.Versions.Nodes {
		for _, w := range n.WrittenBy {
			if strings.Contains(w.Job.Name, "snapshot_log") {
				t.Errorf("a snapshot of the table is written by %s, which only read its metadata table", w.Job.Name)
			}
		}
	}
	up := o.gql(t, `query($ns: String!, $n: String!) { lineage(start: {dataset: {namespace: $ns, name: $n}}, direction: UPSTREAM, depth: 1) {
		nodes { ... on Dataset { id name } } } }`, map[string]any{"ns": uri, "n": db + ".snapshot_log"})
	ub, _ := json.Marshal(up)
	if !strings.Contains(string(ub), `"name":"`+meta+`"`) || strings.Contains(string(ub), tableID) {
		t.Errorf("snapshot_log's upstream %s: want %s and not the table %s", ub, meta, tableID)
	}
	if summary, ids := icebergSync(t, p.store, p.api, uri, cat, db); len(ids) != 0 || !strings.Contains(summary, "2 unchanged") {
		t.Errorf("second sync: %q, %d events; want nothing written", summary, len(ids))
	}
}
