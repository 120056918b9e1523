package decode

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// Regression tests built from what the real producers of e2e/producers_*_test.go sent (testdata/producers/, paths
// and namespaces shortened, nothing else changed).

func producerDecoder(t *testing.T) *Decoder {
	t.Helper()
	d, err := NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Issue 14 item 5: the OpenLineage Spark integration (1.53.0) sends jobType.processingType "NONE" on the
// application job's events. It is a value real producers send: interpreted, no warning.
func TestSparkApplicationProcessingTypeNoneIsAccepted(t *testing.T) {
	ev := decodeOK(t, producerDecoder(t), fixture(t, filepath.Join("producers", "spark-application-start.json")))
	if len(ev.FacetIssues) != 0 {
		t.Fatalf("facet issues %+v, want none", ev.FacetIssues)
	}
	if ev.Job.ProcessingType != "NONE" || ev.Job.JobType != "APPLICATION" || ev.Job.Integration != "SPARK" {
		t.Fatalf("jobType = %q/%q/%q, want NONE/APPLICATION/SPARK", ev.Job.ProcessingType, ev.Job.JobType, ev.Job.Integration)
	}
}

// Issue 14 item 4: the version of an Iceberg write is version.datasetVersion (a string, exact); the
// icebergCommitReport's snapshotId is a JSON double that lost digits and is never used as an id.
func TestIcebergVersionIsTheExactStringNeverTheDouble(t *testing.T) {
	raw := fixture(t, filepath.Join("producers", "spark-iceberg-insert-complete.json"))
	if !bytes.Contains(raw, []byte(`"snapshotId":2.8335083111369078E18`)) {
		t.Fatal("fixture no longer carries the producer's double snapshotId")
	}
	ev := decodeOK(t, producerDecoder(t), raw)
	if len(ev.FacetIssues) != 0 {
		t.Fatalf("facet issues %+v, want none", ev.FacetIssues)
	}
	if got := ev.Outputs[0].Version; got != "2833508311136907611" {
		t.Fatalf("version = %q, want the exact datasetVersion 2833508311136907611", got)
	}

	// The same event with the version sent as the double (as icebergCommitReport has it): refused with a
	// warning naming the field, and no version stored.
	lossy := bytes.Replace(raw, []byte(`"datasetVersion":"2833508311136907611"`), []byte(`"datasetVersion":2.8335083111369078E18`), 1)
	ev = decodeOK(t, producerDecoder(t), lossy)
	if ev.Outputs[0].Version != "" {
		t.Fatalf("a lossy double became version %q", ev.Outputs[0].Version)
	}
	if len(ev.FacetIssues) != 1 || ev.FacetIssues[0].Path != "outputs[0].facets.version.datasetVersion" ||
		ev.FacetIssues[0].Rule != olevent.RuleType || !strings.Contains(ev.FacetIssues[0].Message, "send it as a string") {
		t.Fatalf("facet issues %+v, want one type issue on outputs[0].facets.version.datasetVersion", ev.FacetIssues)
	}

	// An exact integer literal stays accepted (it is its own literal, not a float).
	exact := bytes.Replace(raw, []byte(`"datasetVersion":"2833508311136907611"`), []byte(`"datasetVersion":2833508311136907611`), 1)
	if v := decodeOK(t, producerDecoder(t), exact).Outputs[0].Version; v != "2833508311136907611" {
		t.Fatalf("integer literal version = %q", v)
	}
}

// Issue 14 item 2 (ADR 0025): the OpenLineage Spark integration reports `SELECT ... FROM ice.db.orders.snapshots`
// as an input named by the base table's location, with the snapshots table's schema and one symlink
// db.orders.snapshots. The decoder makes it its own dataset, named by that symlink; the base table is not named.
func TestSparkIcebergSnapshotsReadIsItsOwnDataset(t *testing.T) {
	raw := fixture(t, filepath.Join("producers", "spark-iceberg-snapshots-read-complete.json"))
	if !bytes.Contains(raw, []byte(`"name":"/tmp/hw-spark/iceberg_wh/db/orders"`)) {
		t.Fatal("fixture no longer names the input by the base table's location")
	}
	ev := decodeOK(t, producerDecoder(t), raw)
	if len(ev.Inputs) != 1 {
		t.Fatalf("inputs %+v, want one", ev.Inputs)
	}
	in := ev.Inputs[0]
	if in.Namespace != "file:/tmp/hw-spark/iceberg_wh" || in.Name != "db.orders.snapshots" || len(in.Symlinks) != 0 {
		t.Fatalf("input = %s %s symlinks %v, want the metadata table file:/tmp/hw-spark/iceberg_wh db.orders.snapshots, no symlink",
			in.Namespace, in.Name, in.Symlinks)
	}
	if mt := in.MetadataTable; mt == nil || *mt != (olevent.MetadataTable{Base: olevent.Identifier{Namespace: "file", Name: "/tmp/hw-spark/iceberg_wh/db/orders"}}) {
		t.Fatalf("MetadataTable = %+v, want the base table's location and symlink 0", in.MetadataTable)
	}
	if len(in.Schema) == 0 || in.Schema[0].Path != "committed_at" || in.Version != "915943724423177363" {
		t.Fatalf("schema %v version %q: the metadata table keeps its own schema and the read's version", in.Schema, in.Version)
	}
}

// Issue 18 (ADR 0064): through the Iceberg REST catalog, Spark 3.5 with OpenLineage 1.53.0 reports
// `CREATE TABLE lake.<db>.snapshot_log AS SELECT snapshot_id, operation FROM lake.<db>.orders.snapshots` (captured
// from e2e TestSparkThroughTheRESTCatalogLandsOnTheSyncedTable) with the input named by the base table's location,
// the REST catalog's `catalog` facet and one symlink in the catalog URI's namespace. The decoder makes it the
// dataset <catalog URI> <db>.orders.snapshots, never the table <db>.orders the catalog sync keys by that
// namespace, and points the output's column lineage at it.
func TestSparkIcebergRESTSnapshotsReadIsNotTheTable(t *testing.T) {
	raw := fixture(t, filepath.Join("producers", "spark-iceberg-rest-snapshots-read-complete.json"))
	d, err := NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC) }) // after its capture
	if err != nil {
		t.Fatal(err)
	}
	ev := decodeOK(t, d, raw)
	if len(ev.Inputs) != 1 || len(ev.Outputs) != 1 {
		t.Fatalf("inputs %d outputs %d, want one each", len(ev.Inputs), len(ev.Outputs))
	}
	in := ev.Inputs[0]
	if in.Namespace != "http://127.0.0.1:8281" || in.Name != "hw_sparkrest_d4f0c2cb.orders.snapshots" || len(in.Symlinks) != 0 ||
		in.MetadataTable == nil || in.MetadataTable.Base.Namespace != "file" || !strings.HasSuffix(in.MetadataTable.Base.Name, "/hw_sparkrest_d4f0c2cb/orders") {
		t.Fatalf("input = %s %s symlinks %v metadata %+v, want the metadata table in the catalog's namespace", in.Namespace, in.Name,
			in.Symlinks, in.MetadataTable)
	}
	cl := ev.Outputs[0].ColumnLineage
	if cl == nil || len(cl.Fields["snapshot_id"]) != 1 || cl.Fields["snapshot_id"][0].Name != in.Name || cl.Fields["snapshot_id"][0].Namespace != in.Namespace {
		t.Fatalf("snapshot_log's column lineage %+v, want snapshot_id from the metadata table", cl)
	}
}

// Issue 14 item 5, ADR 0027: openlineage-dbt 1.54.0's dbt_node job facet carries the node's unique_id, on a
// model's job (`dbt-ol build`), on the per-model test job (the model's unique_id, jobType TEST) and on a test's
// own job in structured-logs mode. It is interpreted without warnings.
func TestDbtNodeUniqueIDIsInterpreted(t *testing.T) {
	d, err := NewDecoder(olevent.DefaultLimits(), func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][3]string{
		"dbt-build-model-start.json":     {"warehouse.main.hw_producers.customer_totals.build.run", "MODEL", "model.hw_producers.customer_totals"},
		"dbt-build-tests-start.json":     {"warehouse.main.hw_producers.stg_orders.build.test", "TEST", "model.hw_producers.stg_orders"},
		"dbt-structured-test-start.json": {"test.hw_producers.not_null_stg_orders_order_id.81cfe2fe64", "TEST", "test.hw_producers.not_null_stg_orders_order_id.81cfe2fe64"},
	} {
		ev := decodeOK(t, d, fixture(t, filepath.Join("producers", file)))
		if len(ev.FacetIssues) != 0 {
			t.Errorf("%s: facet issues %+v, want none", file, ev.FacetIssues)
		}
		if got := [3]string{ev.Job.Name, ev.Job.JobType, ev.Job.DbtUniqueID}; got != want {
			t.Errorf("%s: job name, jobType, dbt unique_id = %q, want %q", file, got, want)
		}
	}
}
