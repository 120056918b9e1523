package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 18 / ADR 0064's known limit, ADR 0087 end to end with real pyiceberg against the REST fixture: the
// catalog has a table `orders` and, beside it, a namespace `orders` holding a real table `snapshots`, whose
// catalog name `<ns>.orders.snapshots` is also the name the decoder gives a Spark read of `orders`'s snapshots
// metadata table. A metadata read made that node before the real table existed. The sync names the real table by
// its location (not by the metadata table's name): the metadata table's node gets no uuid alias and none of the
// real table's fields; the real table is found by its uuid with its own fields; a Spark-shaped read of the real
// table (its location, the catalog name as symlink) lands on it; a second sync writes nothing.
func TestANestedTableNamedLikeAMetadataTableIsNotTheMetadataTable(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-icenest-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_nest_"+tok, "fx-nest-"+tok
	uuidNS := "iceberg://" + cat
	orders, meta := ns+".orders", ns+".orders.snapshots"

	ordersLoc := filepath.Dir(filepath.Dir(icebergDo(t, "table", ns, "orders")["metadataLocation"].(string)))
	icebergSync(t, store, api, uri, cat, ns)
	// a Spark read of orders.snapshots (the metadata table): the decoder names its input <ns>.orders.snapshots
	post := func(ev map[string]any) {
		t.Helper()
		code, body := o.post(t, token, ev)
		if code != 202 {
			t.Fatalf("read: %d %v", code, body)
		}
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}
	post(sparkIcebergRead(o, uri, meta, ordersLoc, "1", ordersLoc+"_snapshot_log", map[string]string{"sid": "snapshot_id"}))
	metaNode := icebergDataset(t, o, uri, meta, nil)
	if metaNode == nil {
		t.Fatalf("the metadata read made no node %s", meta)
	}

	// the real table `snapshots` in namespace <ns>.orders
	real := icebergDo(t, "table", ns+".orders", "snapshots")
	u := real["uuid"].(string)
	realLoc := filepath.Dir(filepath.Dir(real["metadataLocation"].(string)))
	icebergSync(t, store, api, uri, cat, ns)

	m := icebergDataset(t, o, uri, meta, nil)
	if m == nil || m.ID != metaNode.ID {
		t.Fatalf("the metadata table's node after the sync: %+v, want %s", m, metaNode.ID)
	}
	for _, a := range m.Aliases {
		if strings.HasPrefix(a.Namespace, "iceberg://") {
			t.Errorf("the metadata table %s got the real table's uuid alias %+v (the collision)", meta, a)
		}
	}
	if _, ok := m.fieldIDs()["id"]; ok {
		t.Errorf("the metadata table %s got the real table's field id: %s", meta, m.paths())
	}
	byUUID := icebergDataset(t, o, uuidNS, u, nil)
	if byUUID == nil || byUUID.ID == metaNode.ID || byUUID.paths() != "id" {
		t.Fatalf("the real table by its uuid: %+v, want its own node (not %s) with field id", byUUID, metaNode.ID)
	}
	if byUUID.Name != realLoc {
		t.Errorf("the real table is named %q, want its location %q", byUUID.Name, realLoc)
	}
	if o := icebergDataset(t, o, uri, orders, nil); o == nil || o.ID == byUUID.ID || o.ID == metaNode.ID {
		t.Errorf("the table orders: %+v", o)
	}

	// Spark's read of the real table names its location, the catalog name a symlink: it lands on the real table
	out := realLoc + "_copy"
	post(sparkIcebergRead(o, uri, meta, realLoc, "1", out, map[string]string{"id": "id"}))
	if got := upstreamFieldIDs(t, o, "file", out, "id")["id"]; got != byUUID.fieldIDs()["id"]+"(id)" {
		t.Errorf("the read of the real table comes from %q, want its field %s", got, byUUID.fieldIDs()["id"])
	}

	// ADR 0087: internal headwater_* facets are stored (Dataset.facets, graph-model.md) and answered only as what
	// they mean (fields, aliases, versions, block history); no API field serves raw facets, and no answer about a
	// synced table carries the headwater_iceberg facet's content.
	schema := o.gql(t, `{ __schema { types { name fields { name } } } }`, nil)
	for _, ty := range schema["__schema"].(map[string]any)["types"].([]any) {
		tm := ty.(map[string]any)
		fs, _ := tm["fields"].([]any)
		for _, f := range fs {
			if n := f.(map[string]any)["name"].(string); strings.Contains(strings.ToLower(n), "facet") {
				t.Errorf("the API serves %s.%s: internal facets must not be served raw", tm["name"], n)
			}
		}
	}
	answer := jsonOf(o.gql(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id name currentName
		description fields { id path tags { name } } aliases { namespace name kind } owners { name } tags { name source }
		versions(first: 20) { nodes { version operation summary { key value } } } } }`, map[string]any{"ns": uuidNS, "n": u}))
	for _, internal := range []string{"headwater_", "metadataLocation", "fieldIds", "tableUuid"} {
		if strings.Contains(answer, internal) {
			t.Errorf("the synced table's answer carries %q: %s", internal, answer)
		}
	}

	// known by its uuid alone: nothing to write
	if line, ids := icebergSync(t, store, api, uri, cat, ns); len(ids) != 0 {
		t.Errorf("a second sync with nothing changed wrote %d events (%s)", len(ids), line)
	}
}
