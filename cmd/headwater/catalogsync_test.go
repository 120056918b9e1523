package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/internal/testenv"
)

// post sends one REST catalog write to the fixture (the test's own data: a namespace, a table).
func post(t *testing.T, path, body string) {
	t.Helper()
	resp, err := http.Post(testenv.IcebergURI()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("%v; start the fixture with `scripts/stack/stack.sh up`", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d", path, resp.StatusCode)
	}
}

func TestCatalogSyncDryRunPrintsTheCatalog(t *testing.T) {
	testenv.Servers(t)
	ns := strings.ReplaceAll(testenv.Namespace(t), ".", "")
	post(t, "/v1/namespaces", `{"namespace": ["`+ns+`"], "properties": {"owner": "lake-team"}}`)
	post(t, "/v1/namespaces/"+ns+"/tables", `{"name": "events", "schema": {"type": "struct", "fields": [
		{"id": 1, "name": "id", "required": true, "type": "long"},
		{"id": 2, "name": "tags", "required": false, "type": {"type": "list", "element-id": 3, "element": "string", "element-required": false}}]}}`)

	var out, errOut bytes.Buffer
	if err := run([]string{"catalog", "sync", "--dry-run", "--uri", testenv.IcebergURI(), "--name", "lake", "--page-size", "2"}, &out, &errOut); err != nil {
		t.Fatalf("catalog sync --dry-run: %v\n%s", err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{"table " + ns + ".events: loaded", "field 1 id long required", "field 2 tags list<string>",
		"field 3 tags.element string", `current snapshot "", 0 snapshots`, "catalog lake: ", "dry run: nothing written"} {
		if !strings.Contains(got, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, got)
		}
	}

	err := run([]string{"catalog", "sync", "--uri", testenv.IcebergURI(), "--root", ns}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--gateway-token") {
		t.Errorf("catalog sync without --dry-run or a token: err = %v, want a refusal naming --gateway-token", err)
	}
}
