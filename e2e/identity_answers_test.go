package e2e

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Issue 14 item 6: answers show identities in the form OpenLineage's naming spec writes and every other
// OpenLineage tool shows: postgres://host:5432, hive://host:9083 (docs/adr/0026-identity-in-answers.md). A producer
// that leaves the default port out names the same dataset as one that writes it, and the old portless form a user
// kept from an earlier answer still finds it. Search ignores case, so "orders" finds Snowflake's "ORDERS"; exact
// lookups stay exact where the platform is case-sensitive.
func TestIdentityInAnswersKeepsTheSpecsPortAndSearchIgnoresCase(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	api := freePort(t)
	start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	tok := testenv.Token(4)
	o := &ownTest{t: t, api: api, jobNS: runID + "-ports-" + tok}
	pg, hive, sf := "postgres://e2e-"+tok+"-warehouse", "hive://e2e-"+tok+"-metastore", "snowflake://e2e-"+tok+"-acct"
	orders := "orders_" + tok // a name no other test uses, so the search below finds only this test's datasets

	// 1. A writer sends the spec's form; the answer is that form (it was postgres://e2e-...-warehouse).
	first := o.run(o.jobNS, nil, []map[string]any{
		o.ds(pg+":5432", "analytics.public.Orders_"+tok, map[string]any{"schema": schemaFacet("id", "amount")}),
		o.ds(hive+":9083", "Default."+orders, nil),
		o.ds(sf, "analytics.public."+orders, nil)})
	// 2. A reader leaves the default port out, as some producers do: the same dataset.
	second := o.run(o.jobNS, []map[string]any{o.ds(pg, "analytics.public.Orders_"+tok, nil), o.ds(hive, "default."+orders, nil)}, nil)
	var ids []string
	for _, ev := range []map[string]any{first, second} {
		code, body := o.post(t, token, ev)
		if code != 202 {
			t.Fatalf("POST: %d %v", code, body)
		}
		ids = append(ids, body["eventId"].(string))
	}
	waitEvents(t, store, ids, projectTimeout)

	runDatasets := func(ev map[string]any, side string) []string {
		r := o.gql(t, `query($id: ID!) { run(id: $id) { inputs { dataset { id namespace name } } outputs { dataset { id namespace name } } } }`,
			map[string]any{"id": ev["run"].(map[string]any)["runId"]})["run"].(map[string]any)
		var out []string
		for _, x := range r[side].([]any) {
			d := x.(map[string]any)["dataset"].(map[string]any)
			out = append(out, d["namespace"].(string)+" "+d["name"].(string)+" "+d["id"].(string))
		}
		sort.Strings(out)
		return out
	}
	pgDS := o.dataset(t, pg+":5432", "analytics.public.Orders_"+tok, "id namespace name")
	hiveDS := o.dataset(t, hive+":9083", "default."+orders, "id namespace name")
	if pgDS == nil || hiveDS == nil {
		t.Fatalf("datasets not found: %v %v", pgDS, hiveDS)
	}
	if pgDS["namespace"] != pg+":5432" || hiveDS["namespace"] != hive+":9083" {
		t.Errorf("answered namespaces %q and %q, want the spec's %q and %q", pgDS["namespace"], hiveDS["namespace"], pg+":5432", hive+":9083")
	}
	wantOut := []string{hive + ":9083 default." + orders + " " + hiveDS["id"].(string),
		pg + ":5432 analytics.public.Orders_" + tok + " " + pgDS["id"].(string)}
	if got := runDatasets(second, "inputs"); strings.Join(got, "\n") != strings.Join(wantOut, "\n") {
		t.Errorf("inputs sent without the port:\n got %v\nwant %v (the same datasets, in the spec's form)", got, wantOut)
	}
	if got := runDatasets(first, "outputs"); len(got) != 3 || got[0] != wantOut[0] || got[1] != wantOut[1] {
		t.Errorf("outputs: %v", got)
	}
	// The portless form an earlier answer showed still finds the dataset, and so does any spelling of the port.
	for _, ns := range []string{pg, "POSTGRESQL://E2E-" + strings.ToUpper(tok) + "-Warehouse:05432"} {
		if d := o.dataset(t, ns, "analytics.public.Orders_"+tok, "id"); d == nil || d["id"] != pgDS["id"] {
			t.Errorf("dataset(%s): %v, want %v", ns, d, pgDS["id"])
		}
	}

	// 3. Search ignores case: Snowflake stores ANALYTICS.PUBLIC.ORDERS_<TOK>, Postgres keeps Orders_<tok>.
	search := func(q string) []string {
		d := o.gql(t, `query($q: String!) { search(query: $q, first: 20) { nodes { ... on Dataset { namespace name } } } }`,
			map[string]any{"q": q})["search"].(map[string]any)
		var out []string
		for _, n := range d["nodes"].([]any) {
			if m := n.(map[string]any); m["namespace"] != nil {
				out = append(out, m["namespace"].(string)+" "+m["name"].(string))
			}
		}
		sort.Strings(out)
		return out
	}
	want := []string{hive + ":9083 default." + orders, pg + ":5432 analytics.public.Orders_" + tok,
		sf + " ANALYTICS.PUBLIC.ORDERS_" + strings.ToUpper(tok)}
	sort.Strings(want)
	for _, q := range []string{orders, strings.ToUpper(orders), "Orders_" + tok} {
		if got := search(q); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("search(%q):\n got %v\nwant %v", q, got, want)
		}
	}
	// 4. Exact lookups stay exact where the platform is case-sensitive (Postgres keeps quoted identifiers' case),
	// and fold where it is not (Snowflake, Hive), as canonicalisation says (ADR 0005).
	if d, _ := o.gqlErrs(t, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { id } }`,
		map[string]any{"ns": pg, "n": "analytics.public.orders_" + tok}); d["dataset"] != nil {
		t.Errorf("a Postgres lookup in another case found %v: Postgres names are case-sensitive", d["dataset"])
	}
	if d := o.dataset(t, sf, "analytics.public."+orders, "name"); d == nil || d["name"] != "ANALYTICS.PUBLIC.ORDERS_"+strings.ToUpper(tok) {
		t.Errorf("a Snowflake lookup in lower case: %v", d)
	}
}
