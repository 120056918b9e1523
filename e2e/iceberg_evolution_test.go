package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/internal/testenv"
)

// sparkIcebergRead is a COMPLETE RunEvent shaped as Spark's OpenLineage listener (1.53.0) reports a read of an
// Iceberg table through a REST catalog (the captured event of ADR 0064): the input named by the table's location
// in the `file` namespace, the catalog name as a symlink in the catalog URI's namespace, the snapshot it read as
// version.datasetVersion and the catalog facet; the output's column lineage names the location. cols maps an
// output column to the input column it copies.
func sparkIcebergRead(o *ownTest, uri, table, location, snapshot, output string, cols map[string]string) map[string]any {
	const sparkProducer = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
	f := func(schemaURL string, m map[string]any) map[string]any {
		m["_producer"], m["_schemaURL"] = sparkProducer, schemaURL
		return m
	}
	fields := map[string]any{}
	for out, in := range cols {
		fields[out] = map[string]any{"inputFields": []any{map[string]any{"namespace": "file", "name": location, "field": in,
			"transformations": []any{map[string]any{"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": false}}}}}
	}
	input := map[string]any{"namespace": "file", "name": location, "facets": map[string]any{
		"version": f("https://openlineage.io/spec/facets/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet",
			map[string]any{"datasetVersion": snapshot}),
		"catalog": f("https://openlineage.io/spec/facets/1-1-0/CatalogDatasetFacet.json#/$defs/CatalogDatasetFacet",
			map[string]any{"framework": "iceberg", "type": "rest", "name": "lake", "metadataUri": uri, "source": "spark"}),
		"symlinks": f("https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
			map[string]any{"identifiers": []any{map[string]any{"namespace": uri, "name": table, "type": "TABLE"}}}),
	}}
	out := map[string]any{"namespace": "file", "name": output, "facets": map[string]any{
		"columnLineage": f("https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
			map[string]any{"fields": fields})}}
	ev := o.run(o.jobNS, []map[string]any{input}, []map[string]any{out})
	ev["eventTime"] = time.Now().UTC().Format(time.RFC3339Nano)
	ev["producer"] = sparkProducer
	ev["job"] = map[string]any{"namespace": o.jobNS, "name": "read_" + filepath.Base(output)}
	ev["run"] = map[string]any{"runId": uuid.NewString()}
	return ev
}

// upstreamFieldIDs is, for each given column of dataset (ns, name), the ids of the Fields its column edges come
// from (one hop upstream, now).
func upstreamFieldIDs(t *testing.T, o *ownTest, ns, name string, cols ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cols {
		d := o.gql(t, `query($ns: String!, $n: String!, $f: String!) { lineage(start: {field: {namespace: $ns, name: $n, field: $f}},
			direction: UPSTREAM, depth: 1, granularity: FIELD) { nodes { __typename ... on Field { id path dataset { name } } } } }`,
			map[string]any{"ns": ns, "n": name, "f": c})
		var ids []string
		for _, n := range d["lineage"].(map[string]any)["nodes"].([]any) {
			m := n.(map[string]any)
			if m["dataset"].(map[string]any)["name"] != name {
				ids = append(ids, m["id"].(string)+"("+m["path"].(string)+")")
			}
		}
		out[c] = strings.Join(ids, ",")
	}
	return out
}

// Issue 18 / ADR 0065 end to end: column lineage through a schema evolution, with real pyiceberg against the
// REST fixture and the catalog sync through the gateway. The table is created and written (snapshot S1, schema 0:
// customer = field 2, amount = field 3); `customer` is renamed to `customer_name` and `amount` dropped and
// re-added (field 6), and the table written again (S2). A Spark-shaped read of S1 naming `customer` and `amount`
// lands on field 2 (the renamed Field, same node) and on the closed Field of the dropped amount, not on the
// re-added one; a read of S2 naming `customer_name` and `amount` lands on field 2 and the re-added Field, though
// its event arrived before the sync that recorded S2 (the projector re-resolves it when the snapshot arrives).
// The reads are OpenLineage events sent through the gateway as the Spark listener shapes them (not a Spark job).
func TestIcebergColumnLineageThroughSchemaEvolution(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-icevo-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_evolve_"+tok, "fx-"+tok
	orders := ns + ".orders"

	icebergStep(t, "create", ns)
	s1 := icebergStep(t, "append-1", ns)["snapshot"].(string)
	icebergSync(t, store, api, uri, cat, ns)
	before := icebergDataset(t, o, uri, orders, nil).fieldIDs()
	if before["customer"] == "" || before["amount"] == "" {
		t.Fatalf("fields after the first sync: %v", before)
	}

	icebergStep(t, "rename-column", ns)
	icebergStep(t, "drop-readd-column", ns)
	evolved := icebergStep(t, "append-evolved", ns)
	s2 := evolved["snapshot"].(string)
	location := filepath.Dir(filepath.Dir(evolved["metadataLocation"].(string)))
	readS2 := location + "_read_s2"
	// The read of S2 arrives before the sync that records S2 and the new schema.
	ev := sparkIcebergRead(o, uri, orders, location, s2, readS2, map[string]string{"customer_name": "customer_name", "amount": "amount"})
	if code, body := o.post(t, token, ev); code != 202 {
		t.Fatalf("read of S2: %d %v", code, body)
	} else {
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}
	icebergSync(t, store, api, uri, cat, ns)
	after := icebergDataset(t, o, uri, orders, nil).fieldIDs()
	if after["customer_name"] != before["customer"] || after["amount"] == "" || after["amount"] == before["amount"] {
		t.Fatalf("fields after the evolution: %v (before %v): want customer_name on customer's field, amount a new field", after, before)
	}

	readS1 := location + "_read_s1"
	ev = sparkIcebergRead(o, uri, orders, location, s1, readS1, map[string]string{"customer": "customer", "amount": "amount"})
	if code, body := o.post(t, token, ev); code != 202 {
		t.Fatalf("read of S1: %d %v", code, body)
	} else {
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}

	want := func(id, path string) string { return id + "(" + path + ")" }
	deadline := time.Now().Add(projectTimeout)
	for {
		gotS1 := upstreamFieldIDs(t, o, "file", readS1, "customer", "amount")
		gotS2 := upstreamFieldIDs(t, o, "file", readS2, "customer_name", "amount")
		okS1 := gotS1["customer"] == want(before["customer"], "customer_name") && gotS1["amount"] == want(before["amount"], "amount")
		okS2 := gotS2["customer_name"] == want(before["customer"], "customer_name") && gotS2["amount"] == want(after["amount"], "amount")
		if okS1 && okS2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("column edges: read of S1 %v, want customer <- %s (the renamed field), amount <- %s (the dropped field, not the re-added %s);"+
				" read of S2 %v, want customer_name <- %s, amount <- %s (the re-added field)",
				gotS1, before["customer"], before["amount"], after["amount"], gotS2, before["customer"], after["amount"])
		}
		time.Sleep(time.Second) // the re-resolution of the early read is a later batch
	}
}
