package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// icebergDriver is the pyiceberg driver the icebergsync tests use (ADR 0039).
const icebergDriver = "../ingest/icebergsync/testdata/pyiceberg_driver.py"

// icebergStep runs one step of the driver's scenario on namespace ns with real pyiceberg against the fixture.
func icebergStep(t *testing.T, step, ns string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, testenv.PyIceberg(t), icebergDriver, testenv.IcebergURI(), "step", step, ns).CombinedOutput()
	if err != nil {
		t.Fatalf("pyiceberg %s: %v\n%s", step, err, out)
	}
	var st map[string]any
	if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &st); err != nil {
		t.Fatalf("pyiceberg %s printed %s: %v", step, out, err)
	}
	return st
}

// runOnceEnv is runOnce with extra environment (the sync's token, kept out of the process's arguments).
func runOnceEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	p := start(t, testenv.KafkaConfig(t), env, args...)
	if err := p.wait(t, 3*time.Minute); err != nil {
		b, _ := os.ReadFile(p.log)
		t.Fatalf("headwater %s: %v\n%s", strings.Join(args, " "), err, tail(string(b), 4000))
	}
	b, _ := os.ReadFile(p.log)
	return string(b)
}

var syncEvents = regexp.MustCompile(`(?m)^event (\S+)$`)
var syncSummary = regexp.MustCompile(`catalog \S+: [^\n]*events written`)

// icebergSync runs `headwater catalog sync` (not a dry run) of the test's namespace against uri, waits until the
// events it wrote are projected and returns its summary line and event ids.
func icebergSync(t *testing.T, store *graph.Store, api, uri, cat, ns string) (string, []string) {
	t.Helper()
	out := runOnceEnv(t, []string{"HEADWATER_ICEBERG_GATEWAY_TOKEN=" + token},
		"catalog", "sync", "--uri="+uri, "--name="+cat, "--root="+ns, "--gateway=http://"+api)
	var ids []string
	for _, m := range syncEvents.FindAllStringSubmatch(out, -1) {
		ids = append(ids, m[1])
	}
	if len(ids) > 0 {
		waitEvents(t, store, ids, projectTimeout)
	}
	return syncSummary.FindString(out), ids
}

type icebergAnswer struct {
	ID, Name, CurrentName string
	DroppedAt             *string
	ResolvedFrom          *struct{ Kind string }
	Fields                []struct{ ID, Path string }
	Aliases               []struct{ Namespace, Name, Kind string }
	Versions              struct {
		Nodes []struct {
			Version, Operation string
			ParentVersion      *string
			CommittedAt        *string
			Summary            []struct{ Key, Value string }
		}
	}
}

const icebergDatasetQuery = `query($ns: String!, $n: String!, $at: Time) { dataset(namespace: $ns, name: $n, asOf: $at) {
	id name currentName droppedAt resolvedFrom { kind } fields { id path } aliases { namespace name kind }
	versions(first: 20) { nodes { version parentVersion committedAt operation summary { key value } } } } }`

func icebergDataset(t *testing.T, o *ownTest, ns, name string, at *time.Time) *icebergAnswer {
	t.Helper()
	vars := map[string]any{"ns": ns, "n": name}
	if at != nil {
		vars["at"] = at.UTC().Format(time.RFC3339Nano)
	}
	d := o.gql(t, icebergDatasetQuery, vars)["dataset"]
	if d == nil {
		return nil
	}
	b, _ := json.Marshal(d)
	var a icebergAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return &a
}

// fieldIDs maps path -> Field id.
func (a *icebergAnswer) fieldIDs() map[string]string {
	out := map[string]string{}
	for _, f := range a.Fields {
		out[f.Path] = f.ID
	}
	return out
}

func (a *icebergAnswer) paths() string {
	var p []string
	for _, f := range a.Fields {
		p = append(p, f.Path)
	}
	sort.Strings(p)
	return strings.Join(p, ",")
}

// syncWrites is what tells whether a sync wrote anything: the events the test's gateway accepted from the
// sync's principal (its metrics) and the projector's write stamp (projSeq) of the table's node.
func syncWrites(t *testing.T, store *graph.Store, metrics, uuidNS string) (accepted float64, projSeq int64) {
	t.Helper()
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "headwater_gateway_events_total{") && strings.Contains(line, `principal="`+subject+`"`) &&
			strings.Contains(line, `outcome="accepted"`) {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			accepted += v
		}
	}
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver, `MATCH (:DatasetName {namespace: $u})-[:NAMES]->(d:Dataset)
		RETURN max(d.projSeq) AS s`, map[string]any{"u": uuidNS}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := res.Records[0].Get("s")
	n, _ := v.(int64)
	return accepted, n
}

// Issue 18, the graph side of the sync (docs/adr/0041-iceberg-catalog-sync-into-the-graph.md): pyiceberg creates a
// table, appends twice, renames a column, drops and re-adds one of the same name and renames the table, with a
// sync after each. A node an engine's event created earlier under the table's name is the table (same id, no
// second node), bound to its uuid; the rename is a RENAME at the sync that saw it, with no OpenLineage event from
// any engine; asOf answers give the names of their time on the same ids; the renamed column keeps its field; the
// re-added column is a new field; the snapshots are the dataset's versions with parent, time, operation and summary;
// a sync with nothing changed writes nothing; a catalog that fails mid-sync deletes nothing; a table gone from
// the catalog is a DROP at the sync that saw it gone, and its versions stay.
func TestIcebergCatalogSyncWritesTheCatalogIntoTheGraph(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api, metrics := freePort(t), freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-iceberg-" + tok}
	uri := testenv.IcebergURI()
	ns, cat := "hw_sync_"+tok, "fx-"+tok
	uuidNS := "iceberg://" + cat
	orders, ordersV2 := ns+".orders", ns+".orders_v2"

	// 0. An engine reported the table by its catalog name before any sync (pyiceberg and Trino name db.table in
	// the catalog's namespace).
	ev := o.run(o.jobNS, nil, []map[string]any{o.ds(uri, orders, nil)})
	if code, body := o.post(t, token, ev); code != 202 {
		t.Fatalf("engine event: %d %v", code, body)
	} else {
		waitEvents(t, store, []string{body["eventId"].(string)}, projectTimeout)
	}
	engine := icebergDataset(t, o, uri, orders, nil)
	if engine == nil {
		t.Fatal("the engine's dataset is not there")
	}

	// 1. create, sync: the same node, now bound to the table's uuid.
	created := icebergStep(t, "create", ns)
	u := created["uuid"].(string)
	icebergSync(t, store, api, uri, cat, ns)
	atCreate := time.Now()
	d := icebergDataset(t, o, uri, orders, nil)
	if d == nil || d.ID != engine.ID {
		t.Fatalf("after the first sync the table is %+v, want the engine's node %s", d, engine.ID)
	}
	if byUUID := icebergDataset(t, o, uuidNS, u, nil); byUUID == nil || byUUID.ID != engine.ID || byUUID.ResolvedFrom == nil || byUUID.ResolvedFrom.Kind != "SYMLINK" {
		t.Fatalf("dataset(%s, %s) = %+v, want the table's node %s found through its uuid identifier", uuidNS, u, byUUID, engine.ID)
	}
	if got := d.paths(); got != "amount,customer,order_id,ship,ship.city" {
		t.Errorf("fields after create: %s", got)
	}
	fieldsAtCreate := d.fieldIDs()

	// 2. two appends: two snapshots, the second's parent the first.
	icebergStep(t, "append-1", ns)
	icebergSync(t, store, api, uri, cat, ns)
	a2 := icebergStep(t, "append-2", ns)
	icebergSync(t, store, api, uri, cat, ns)
	snaps := a2["snapshots"].([]any)
	d = icebergDataset(t, o, uri, orders, nil)
	if len(snaps) != 2 || len(d.Versions.Nodes) != 2 {
		t.Fatalf("versions %+v, want the two snapshots %v", d.Versions.Nodes, snaps)
	}
	newest, oldest := d.Versions.Nodes[0], d.Versions.Nodes[1]
	if newest.Version != snaps[1] || oldest.Version != snaps[0] || newest.ParentVersion == nil || *newest.ParentVersion != snaps[0] ||
		oldest.ParentVersion != nil || newest.Operation != "append" || newest.CommittedAt == nil {
		t.Errorf("versions %+v, want %v newest first, the second's parent the first, operation append", d.Versions.Nodes, snaps)
	}
	summary := map[string]string{}
	for _, e := range newest.Summary {
		summary[e.Key] = e.Value
	}
	if summary["added-records"] != "3" || summary["total-records"] != "5" {
		t.Errorf("the second snapshot's summary %v, want added-records 3, total-records 5", summary)
	}

	// 3. nothing changed: the sync writes nothing.
	accepted, seq := syncWrites(t, store, metrics, uuidNS)
	if accepted == 0 || seq == 0 {
		t.Fatalf("the syncs so far: %v events accepted, table written %d times", accepted, seq)
	}
	line, ids := icebergSync(t, store, api, uri, cat, ns)
	time.Sleep(3 * time.Second) // anything written would be projected by now
	if a, s := syncWrites(t, store, metrics, uuidNS); len(ids) != 0 || !strings.Contains(line, "1 unchanged") || a != accepted || s != seq {
		t.Errorf("a sync with nothing changed wrote %d events (%s): accepted %v -> %v, table writes %d -> %d", len(ids), line, accepted, a, seq, s)
	}

	// 4. rename a column: the same field, the new name from that sync on.
	icebergStep(t, "rename-column", ns)
	icebergSync(t, store, api, uri, cat, ns)
	atColumnRename := time.Now()
	d = icebergDataset(t, o, uri, orders, nil)
	if got := d.paths(); got != "amount,customer_name,order_id,ship,ship.city" {
		t.Errorf("fields after the column rename: %s", got)
	}
	if got := d.fieldIDs()["customer_name"]; got != fieldsAtCreate["customer"] {
		t.Errorf("customer_name is field %s, want customer's field %s (same field id, renamed)", got, fieldsAtCreate["customer"])
	}

	// 5. drop and re-add amount: a new field; the old one ends.
	icebergStep(t, "drop-readd-column", ns)
	icebergSync(t, store, api, uri, cat, ns)
	d = icebergDataset(t, o, uri, orders, nil)
	if got := d.fieldIDs()["amount"]; got == "" || got == fieldsAtCreate["amount"] {
		t.Errorf("the re-added amount is field %q, want a new field (the old one was %s)", got, fieldsAtCreate["amount"])
	}

	// 6. rename the table: a RENAME at the sync that saw it; the old name finds the same node.
	icebergStep(t, "rename-table", ns)
	beforeTableRename := time.Now()
	_, ids = icebergSync(t, store, api, uri, cat, ns)
	if len(ids) != 1 {
		t.Errorf("the table rename wrote %d events, want 1 (the RENAME; metadata unchanged)", len(ids))
	}
	d = icebergDataset(t, o, uri, ordersV2, nil)
	if d == nil || d.ID != engine.ID || d.Name != ordersV2 {
		t.Fatalf("after the table rename %s is %+v, want node %s", ordersV2, d, engine.ID)
	}
	if !slices.ContainsFunc(d.Aliases, func(a struct{ Namespace, Name, Kind string }) bool { return a.Name == orders && a.Kind == "RENAMED" }) {
		t.Errorf("aliases %+v lack the old name as RENAMED", d.Aliases)
	}

	// asOf across all of it: the same ids, the names of their time.
	for _, c := range []struct {
		at    time.Time
		name  string
		paths string
	}{
		{atCreate, orders, "amount,customer,order_id,ship,ship.city"},
		{atColumnRename, orders, "amount,customer_name,order_id,ship,ship.city"},
		{beforeTableRename, orders, "amount,customer_name,order_id,ship,ship.city"},
	} {
		a := icebergDataset(t, o, uri, ordersV2, &c.at)
		if a == nil || a.ID != engine.ID || a.Name != c.name || a.CurrentName != ordersV2 || a.paths() != c.paths {
			t.Errorf("asOf %s: %+v, want id %s, name %s, fields %s", c.at.Format(time.RFC3339Nano), a, engine.ID, c.name, c.paths)
			continue
		}
		if c.at.Equal(atCreate) && a.fieldIDs()["amount"] != fieldsAtCreate["amount"] {
			t.Errorf("asOf create: amount is %s, want the original field %s", a.fieldIDs()["amount"], fieldsAtCreate["amount"])
		}
		if c.at.Equal(atColumnRename) && a.fieldIDs()["customer_name"] != fieldsAtCreate["customer"] {
			t.Errorf("asOf the column rename: customer_name is %s, want %s", a.fieldIDs()["customer_name"], fieldsAtCreate["customer"])
		}
	}
	if a := icebergDataset(t, o, uri, ordersV2, &atCreate); a != nil && a.fieldIDs()["customer"] != fieldsAtCreate["customer"] {
		t.Errorf("asOf create: customer is %s, want %s (the field renamed later)", a.fieldIDs()["customer"], fieldsAtCreate["customer"])
	}

	// 7. the catalog fails mid-sync (namespaces answer, table listings do not): nothing is written, nothing
	// deleted.
	target, _ := url.Parse(uri)
	var calls atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if strings.HasSuffix(r.URL.Path, "/tables") {
			http.Error(w, `{"error": {"message": "down", "type": "ServiceUnavailableException", "code": 503}}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer failing.Close()
	accepted, seq = syncWrites(t, store, metrics, uuidNS)
	p := start(t, kc, []string{"HEADWATER_ICEBERG_GATEWAY_TOKEN=" + token},
		"catalog", "sync", "--uri="+failing.URL, "--namespace="+uri, "--name="+cat, "--root="+ns, "--gateway=http://"+api)
	if err := p.wait(t, 3*time.Minute); err == nil {
		t.Errorf("a sync against a failing catalog succeeded")
	}
	if calls.Load() == 0 {
		t.Errorf("the failing catalog was never asked")
	}
	// Anything it published would be projected within seconds: watch for 15.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if a, s := syncWrites(t, store, metrics, uuidNS); a != accepted || s != seq {
			t.Fatalf("a failed sync wrote: accepted %v -> %v, table writes %d -> %d", accepted, a, seq, s)
		}
		if d := icebergDataset(t, o, uri, ordersV2, nil); d == nil || d.DroppedAt != nil {
			t.Fatalf("after a failed sync the table is %+v, want it there, not dropped", d)
		}
	}

	// 8. drop the table: a DROP at the sync that saw it gone; the versions stay.
	icebergStep(t, "drop-table", ns)
	beforeDrop := time.Now()
	icebergSync(t, store, api, uri, cat, ns)
	d = icebergDataset(t, o, uri, ordersV2, nil)
	if d == nil || d.DroppedAt == nil || d.ID != engine.ID || len(d.Versions.Nodes) != 2 {
		t.Fatalf("after the drop: %+v, want node %s dropped with its two versions", d, engine.ID)
	}
	if at, _ := time.Parse(time.RFC3339Nano, *d.DroppedAt); at.Before(beforeDrop.Add(-time.Second)) {
		t.Errorf("dropped at %s, before the sync that saw it gone (%s)", *d.DroppedAt, beforeDrop)
	}
}
