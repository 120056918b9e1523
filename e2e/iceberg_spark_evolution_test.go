package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 18 / ADR 0065 / ADR 0083 with the real producer: the table evolves as in
// TestIcebergColumnLineageThroughSchemaEvolution (pyiceberg: S1 under schema 0; customer renamed to customer_name,
// amount dropped and re-added; S2), both syncs run through the gateway, and then REAL Spark 3.5 with the
// OpenLineage listener and iceberg-spark-runtime reads the table through the REST catalog in one session: S1 by
// time travel (`VERSION AS OF <S1>`, customer and amount) and the current snapshot (customer_name and amount),
// each into a parquet directory. Spark reports S2 as the version of the S1 read; its scan report names S1 as a
// double, which the projector matches to S1 (ADR 0084). The inputs resolve to the synced table (Spark names it by its location: ADR
// 0083's binding, no second node), and the column edges land on the right Field nodes: customer and customer_name
// on the one renamed Field, S1's amount on the closed Field of the dropped column, the current amount on the
// re-added one.
func TestSparkReadsAnEvolvedIcebergTableAtTwoSnapshots(t *testing.T) {
	home, jars := sparkHome(t)
	p := newProducerRun(t, "sparkevo")
	src, _ := filepath.Abs("testdata/producers/spark")
	copyTree(t, src, p.work)
	o := &ownTest{t: t, api: p.api, jobNS: p.jobNS}
	uri := testenv.IcebergURI()
	tok := testenv.Token(4)
	ns, cat := "hw_sparkevo_"+tok, "fx-sparkevo-"+tok
	orders := ns + ".orders"

	icebergStep(t, "create", ns)
	s1 := icebergStep(t, "append-1", ns)["snapshot"].(string)
	icebergSync(t, p.store, p.api, uri, cat, ns)
	before := icebergDataset(t, o, uri, orders, nil).fieldIDs()
	icebergStep(t, "rename-column", ns)
	icebergStep(t, "drop-readd-column", ns)
	s2 := icebergStep(t, "append-evolved", ns)["snapshot"].(string)
	icebergSync(t, p.store, p.api, uri, cat, ns)
	synced := icebergDataset(t, o, uri, orders, nil)
	after := synced.fieldIDs()
	if before["customer"] == "" || after["customer_name"] != before["customer"] || after["amount"] == "" || after["amount"] == before["amount"] {
		t.Fatalf("fields before %v, after %v: want customer_name on customer's field, amount a new field", before, after)
	}

	events := filepath.Join(p.work, "events.jsonl")
	env := []string{"SPARK_LOCAL_IP=127.0.0.1", "PYSPARK_PYTHON=" + filepath.Join(home, "venv", "bin", "python")}
	p.run(t, p.work, env, 0, filepath.Join(home, "venv", "bin", "python"), filepath.Join(p.work, "evolved_read_job.py"),
		p.work, p.url(), token, p.jobNS, events, strings.Join(jars, ","), uri, orders, s1)
	waitEvents(t, p.store, eventIDs(t, events), projectTimeout)
	raw, _ := os.ReadFile(events)

	readS1, readS2 := filepath.Join(p.work, "read_s1"), filepath.Join(p.work, "read_s2")
	// What Spark reports as the version it read, and the snapshot its scan report names (a lossy double).
	verS1, scanS1 := sparkReadVersion(t, raw, readS1)
	t.Logf("Spark's time-travel read of S1 (%s): version.datasetVersion %q, icebergScanReport.snapshotId %s (S2 %s)", s1, verS1, scanS1, s2)
	// OpenLineage 1.53.0 names the table's CURRENT snapshot (S2) as the version of a time-travel read (ADR 0065,
	// "what real Spark reports"); the scanned snapshot is only in the scan report, a double. Either way the
	// projector names S1: the one recorded snapshot that double rounds to (ADR 0084).
	if verS1 != s1 && verS1 != s2 {
		t.Fatalf("Spark reported version %q for the read of S1 (%s), neither S1 nor S2 (%s)", verS1, s1, s2)
	}
	if id, how := fold.MatchScanSnapshot(scanS1, []string{s1, s2}); id != s1 {
		t.Fatalf("Spark's scan report of the read of S1 says %q: matches %q (%s) of S1 %s, S2 %s; want S1", scanS1, id, how, s1, s2)
	}
	wantS1Amount := before["amount"] // the closed Field of the dropped column, whatever version Spark reported
	want := func(id, path string) string { return id + "(" + path + ")" }
	var gotS1, gotS2 map[string]string
	for deadline := time.Now().Add(projectTimeout); ; time.Sleep(time.Second) {
		gotS1 = upstreamFieldIDs(t, o, "file", readS1, "customer", "amount")
		gotS2 = upstreamFieldIDs(t, o, "file", readS2, "customer_name", "amount")
		if gotS1["customer"] == want(before["customer"], "customer_name") && gotS1["amount"] == want(wantS1Amount, "amount") &&
			gotS2["customer_name"] == want(before["customer"], "customer_name") && gotS2["amount"] == want(after["amount"], "amount") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("column edges: read of S1 %v, want customer <- %s (the renamed field), amount <- %s (the closed field of the dropped column, S1's; re-added %s);"+
				" read of S2 %v, want customer_name <- %s, amount <- %s (the re-added field)\nSpark's events:\n%s",
				gotS1, before["customer"], wantS1Amount, after["amount"], gotS2, before["customer"], after["amount"], tail(string(raw), 6000))
		}
	}

	// The READ of the time-travel run names S1, and keeps what Spark sent (ADR 0084).
	reads, err := p.store.ReadRecords(t.Context(), `MATCH (r:Run)-[w:WROTE]->(:Dataset {name: $out})
		MATCH (r)-[x:READ]->(:Dataset)
		RETURN x.datasetVersion AS v, x.scanSnapshotId AS scan, x.scanMatch AS m, x.reportedVersion AS rv`, map[string]any{"out": readS1})
	if err != nil {
		t.Fatal(err)
	}
	wantRV := any(nil)
	if verS1 != s1 {
		wantRV = verS1
	}
	if len(reads) != 1 || reads[0]["v"] != s1 || reads[0]["scan"] != scanS1 || reads[0]["m"] != fold.ScanMatched || reads[0]["rv"] != wantRV {
		t.Errorf("READ of the time-travel run: %v, want version %s, scan %s, MATCHED, reported %v", reads, s1, scanS1, wantRV)
	}

	// Both reads' input is the synced table: its upstream, and no second Dataset for it under its location.
	for _, out := range []string{readS1, readS2} {
		up := o.gql(t, `query($n: String!) { lineage(start: {dataset: {namespace: "file", name: $n}}, direction: UPSTREAM, depth: 1) {
			nodes { ... on Dataset { id } } } }`, map[string]any{"n": out})
		if ids := datasetIDs(up); len(ids) != 2 || !strings.Contains(strings.Join(ids, ","), synced.ID) {
			t.Errorf("upstream of %s: %v, want itself and the synced table %s", out, ids, synced.ID)
		}
	}
	recs, err := p.store.ReadRecords(t.Context(), `MATCH (d:Dataset) WHERE d.name = $name OR d.name ENDS WITH $location
		RETURN d.namespace AS ns, d.name AS n`, map[string]any{"name": orders, "location": ns + "/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("%d nodes for the table, want one (the synced table): %v", len(recs), recs)
	}
}

// datasetIDs are the ids of the Dataset nodes of a lineage answer.
func datasetIDs(v map[string]any) []string {
	var ids []string
	for _, n := range v["lineage"].(map[string]any)["nodes"].([]any) {
		if id, ok := n.(map[string]any)["id"].(string); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// sparkReadVersion is, in Spark's COMPLETE event writing output, the input's version.datasetVersion and the
// snapshot id of its icebergScanReport input facet (as Spark sent it).
func sparkReadVersion(t *testing.T, raw []byte, output string) (version, scanned string) {
	t.Helper()
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		var ev struct {
			EventType string
			Inputs    []struct {
				Facets struct {
					Version struct{ DatasetVersion string }
				}
				InputFacets struct {
					IcebergScanReport struct{ SnapshotID json.Number }
				}
			}
			Outputs []struct{ Name string }
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		if d.Decode(&ev) != nil || ev.EventType != "COMPLETE" || len(ev.Outputs) != 1 || ev.Outputs[0].Name != output || len(ev.Inputs) != 1 {
			continue
		}
		return ev.Inputs[0].Facets.Version.DatasetVersion, ev.Inputs[0].InputFacets.IcebergScanReport.SnapshotID.String()
	}
	t.Fatalf("no COMPLETE event of Spark writing %s with one input", output)
	return "", ""
}
