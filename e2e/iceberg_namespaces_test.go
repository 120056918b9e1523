package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// icebergDo runs one of the pyiceberg driver's commands (table, namespace-owner, ...) against the fixture and
// returns the JSON it printed last.
func icebergDo(t *testing.T, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, testenv.PyIceberg(t), append([]string{icebergDriver, testenv.IcebergURI()}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pyiceberg %v: %v\n%s", args, err, out)
	}
	var st map[string]any
	if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &st); err != nil {
		t.Fatalf("pyiceberg %v printed %s: %v", args, out, err)
	}
	return st
}

func owners(t *testing.T, api, tok, ns, name string) (string, bool) {
	t.Helper()
	data, errs := gqlErrs(t, api, tok, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { owners { name } } }`,
		map[string]any{"ns": ns, "n": name})
	if len(errs) > 0 {
		b, _ := json.Marshal(errs)
		if strings.Contains(string(b), "NOT_FOUND") {
			return "", false
		}
		t.Fatalf("graphql: %s", b)
	}
	d, _ := data["dataset"].(map[string]any)
	var names []string
	for _, o := range d["owners"].([]any) {
		names = append(names, o.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ","), true
}

// Issue 18, governance from the catalog (docs/iceberg.md "Namespaces: owners and grants"): a table that names no
// owner of its own is owned by its nearest namespace's `owner` property, and follows it when it changes; a
// table's own owner wins. A catalog namespace is a securable: a grant on the PREFIX <namespace> of the catalog's
// namespace covers its tables, also one created after the grant, and nothing of the sibling namespace is
// visible to the grantee.
func TestCatalogNamespacesOwnTheirTablesAndAreSecurables(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	uri := testenv.IcebergURI()
	root, cat := "hw_own_"+tok, "fx-own-"+tok
	sales, hr := root+".sales", root+".hr"
	icebergDo(t, "namespace-owner", root, "data-platform")
	icebergDo(t, "namespace-owner", sales, "sales-team")
	icebergDo(t, "table", sales, "leads")
	icebergDo(t, "table", hr, "people")
	icebergSync(t, store, api, uri, cat, root)

	for name, want := range map[string]string{sales + ".leads": "sales-team", hr + ".people": "data-platform"} {
		if got, ok := owners(t, api, token, uri, name); !ok || got != want {
			t.Errorf("owners of %s: %q (found %v), want %q", name, got, ok, want)
		}
	}
	// the namespace's owner changes, the table does not: the next sync moves the table's owner
	icebergDo(t, "namespace-owner", sales, "revenue-team")
	icebergSync(t, store, api, uri, cat, root)
	if got, _ := owners(t, api, token, uri, sales+".leads"); got != "revenue-team" {
		t.Errorf("after the namespace's owner changed: %q, want revenue-team", got)
	}

	// a grant on the catalog namespace sales
	reader := runID + "-ns-reader-" + tok
	gql(t, api, token, `mutation($r: String!) { createRole(name: $r) }`, map[string]any{"r": reader})
	gql(t, api, token, `mutation($g: GrantInput!) { grant(grant: $g) }`, map[string]any{"g": map[string]any{"role": reader,
		"privilege": "DESCRIBE", "on": map[string]any{"namespace": uri, "prefix": sales}}})
	gql(t, api, token, `mutation($s: String!, $r: String!) { bindRole(subject: $s, role: $r) }`, map[string]any{"s": reader, "r": reader})
	readerTok := newToken(t, reader)
	icebergDo(t, "table", sales, "later")
	icebergSync(t, store, api, uri, cat, root)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, leads := owners(t, api, readerTok, uri, sales+".leads")
		_, later := owners(t, api, readerTok, uri, sales+".later")
		if leads && later {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the namespace grantee does not see sales' tables: leads %v, later (created after the grant) %v", leads, later)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if _, ok := owners(t, api, readerTok, uri, hr+".people"); ok {
		t.Errorf("the grantee of %s sees %s.people", sales, hr)
	}
	data := gql(t, api, readerTok, `query($q: String!) { search(query: $q, first: 50) { nodes { ... on Dataset { name } } } }`,
		map[string]any{"q": root})
	if b, _ := json.Marshal(data); strings.Contains(string(b), hr) || !strings.Contains(string(b), sales+".later") {
		t.Errorf("the grantee's search: %s, want sales' tables and nothing of hr", b)
	}
}
