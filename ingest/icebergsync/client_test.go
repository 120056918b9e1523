package icebergsync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/internal/testenv"
)

// The tests run against the Iceberg REST fixture scripts/stack/stack.sh starts, with tables made by pyiceberg
// (testdata/pyiceberg_driver.py), each under its own top-level namespace.

type step struct {
	Step             string         `json:"step"`
	UUID             string         `json:"uuid"`
	Snapshot         string         `json:"snapshot"`
	Snapshots        []string       `json:"snapshots"`
	Fields           map[string]int `json:"fields"`
	SchemaID         int            `json:"schemaId"`
	MetadataLocation string         `json:"metadataLocation"`
}

type scenario struct {
	Namespace []string `json:"namespace"`
	Table     []string `json:"table"`
	Steps     []step   `json:"steps"`
}

// drive runs the pyiceberg driver against the fixture and decodes what it prints into out.
func drive(t *testing.T, out any, args ...string) {
	t.Helper()
	py := testenv.PyIceberg(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{"testdata/pyiceberg_driver.py", testenv.IcebergURI()}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyiceberg driver %v: %v\n%s", args, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("pyiceberg driver %v printed %q: %v", args, stdout.String(), err)
	}
}

func newClient(t *testing.T, pageSize int) *icebergrest.Client {
	t.Helper()
	testenv.Servers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := icebergrest.NewClient(ctx, icebergrest.ClientConfig{URI: testenv.IcebergURI(), PageSize: pageSize})
	if err != nil {
		t.Fatalf("%v; start the fixture with `scripts/stack/stack.sh up`", err)
	}
	return c
}

// topNamespace is a unique top-level namespace for one test ("t-3fa2c1"; Namespace's form without dots).
func topNamespace(t *testing.T) string { return strings.ReplaceAll(testenv.Namespace(t), ".", "") }

func TestConfigNamesTheEndpointsAndTheSeparator(t *testing.T) {
	c := newClient(t, 0)
	cfg := c.Config()
	for _, want := range []string{"GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}/tables",
		"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"} {
		if !slices.Contains(cfg.Endpoints, want) {
			t.Errorf("config endpoints lack %q: %v", want, cfg.Endpoints)
		}
	}
	// Jetty refuses the spec's default separator %1F in paths, so the fixture advertises "." (%2E); the client
	// must use the advertised one, or every nested-namespace path would fail with HTTP 400.
	if sep, _ := cfg.Property("namespace-separator"); sep != "%2E" {
		t.Errorf("namespace-separator = %q, want the fixture's %%2E", sep)
	}
}

func TestNestedNamespacesAndPagesAreAllListed(t *testing.T) {
	top := topNamespace(t)
	var made struct{}
	drive(t, &made, "namespaces", top+".sales", "5")
	drive(t, &made, "tables", top+".sales.n0003", "5")
	ctx := context.Background()
	c := newClient(t, 2) // 5 children and 5 tables: three pages each

	children, err := c.ListNamespaces(ctx, icebergrest.Namespace{top, "sales"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range children {
		names = append(names, ns.String())
	}
	want := []string{top + ".sales.n0000", top + ".sales.n0001", top + ".sales.n0002", top + ".sales.n0003", top + ".sales.n0004"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("children of %s.sales over pages of 2 = %v, want %v", top, names, want)
	}

	tables, err := c.ListTables(ctx, icebergrest.Namespace{top, "sales", "n0003"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 5 || tables[0].Namespace.String() != top+".sales.n0003" {
		t.Errorf("tables of %s.sales.n0003 over pages of 2 = %v, want t0000..t0004", top, tables)
	}

	top1, err := c.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(top1, func(ns icebergrest.Namespace) bool { return ns.String() == top }) {
		t.Errorf("top-level namespaces lack %s", top)
	}
}

func TestLoadTableKeepsIdentityThroughEvolutionAndRename(t *testing.T) {
	top := topNamespace(t)
	var sc scenario
	drive(t, &sc, "scenario", top+".sales")
	first, last := sc.Steps[0], sc.Steps[len(sc.Steps)-1]
	ctx := context.Background()
	c := newClient(t, 0)

	l, err := c.LoadTable(ctx, icebergrest.TableIdent{Namespace: icebergrest.Namespace{top, "sales"}, Name: "orders_v2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	m := l.Table.Metadata
	if m.TableUUID != first.UUID || l.Table.MetadataLocation != last.MetadataLocation {
		t.Errorf("renamed table: uuid %s at %s, want %s at %s", m.TableUUID, l.Table.MetadataLocation, first.UUID, last.MetadataLocation)
	}
	if l.ETag == "" {
		t.Error("loadTable answered no ETag")
	}
	fields := map[string]int{}
	for _, f := range m.CurrentSchema().Flatten() {
		fields[f.Path] = f.ID
	}
	if fields["customer_name"] != first.Fields["customer"] {
		t.Errorf("renamed column customer_name has id %d, want customer's %d", fields["customer_name"], first.Fields["customer"])
	}
	if fields["amount"] == first.Fields["amount"] || fields["amount"] != last.Fields["amount"] {
		t.Errorf("re-added amount has id %d, want a new id (%d, not %d)", fields["amount"], last.Fields["amount"], first.Fields["amount"])
	}
	if _, ok := fields["ship.city"]; !ok {
		t.Errorf("nested field ship.city missing from %v", fields)
	}
	if len(m.Schemas) != 4 {
		t.Errorf("schemas = %d, want 4 (create, rename, drop, re-add)", len(m.Schemas))
	}

	var snaps []string
	for _, s := range m.Snapshots {
		snaps = append(snaps, string(s.SnapshotID))
		if s.Operation() != "append" {
			t.Errorf("snapshot %s operation %q, want append", s.SnapshotID, s.Operation())
		}
	}
	if !slices.Equal(snaps, last.Snapshots) || m.Current() != last.Snapshot {
		t.Errorf("snapshots %v current %s, want pyiceberg's %v current %s", snaps, m.Current(), last.Snapshots, last.Snapshot)
	}
	if p := m.Snapshots[1].ParentSnapshotID; p == nil || string(*p) != snaps[0] {
		t.Errorf("second snapshot's parent = %v, want %s", p, snaps[0])
	}
	if ref := m.Refs["main"]; ref.Type != "branch" || string(ref.SnapshotID) != last.Snapshot {
		t.Errorf("refs.main = %+v, want branch at %s", ref, last.Snapshot)
	}
	// Six metadata files (create, two appends, rename, drop, re-add; the table rename is the catalog's alone):
	// the current one and five earlier ones in the log.
	if len(m.MetadataLog) != 5 {
		t.Errorf("metadata log has %d entries, want 5", len(m.MetadataLog))
	}

	_, err = c.LoadTable(ctx, icebergrest.TableIdent{Namespace: icebergrest.Namespace{top, "sales"}, Name: "orders"}, "")
	if !icebergrest.NotFound(err) {
		t.Errorf("the old name after the rename: err = %v, want a 404", err)
	}
}

func TestUnchangedTableIsNoWork(t *testing.T) {
	top := topNamespace(t)
	var sc scenario
	drive(t, &sc, "scenario", top+".sales")
	ctx := context.Background()
	c := newClient(t, 0)
	id := icebergrest.TableIdent{Namespace: icebergrest.Namespace{top, "sales"}, Name: "orders_v2"}

	first, err := c.LoadTable(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.LoadTable(ctx, id, first.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if !again.NotModified || again.Table != nil {
		t.Fatalf("loadTable with the ETag of an unchanged table: NotModified=%v, want a 304 with no body", again.NotModified)
	}

	scan1, err := icebergsync.Scan(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours := func(r icebergsync.ScanResult) icebergsync.TableState {
		for _, ts := range r.Tables {
			if ts.Ident.String() == id.String() {
				return ts
			}
		}
		t.Fatalf("scan lacks %s", id)
		return icebergsync.TableState{}
	}
	if ours(scan1).Unchanged {
		t.Error("a first scan saw the table as unchanged")
	}
	scan2, err := icebergsync.Scan(ctx, c, scan1.SeenOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if st := ours(scan2); !st.Unchanged || st.Result != nil {
		t.Errorf("second scan with nothing changed: Unchanged=%v loaded=%v, want a 304 and no work", st.Unchanged, st.Result != nil)
	}

	var appended step
	drive(t, &appended, "append", top+".sales", "orders_v2")
	scan3, err := icebergsync.Scan(ctx, c, scan2.SeenOf(scan1.SeenOf(nil)))
	if err != nil {
		t.Fatal(err)
	}
	st := ours(scan3)
	if st.Unchanged || st.Result == nil || st.Result.Metadata.Current() != appended.Snapshot {
		t.Errorf("scan after an append: Unchanged=%v, want the new snapshot %s loaded", st.Unchanged, appended.Snapshot)
	}
}
