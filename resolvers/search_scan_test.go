package resolvers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

const searchScanQ = `query($q: String!, $first: Int, $after: String) { search(query: $q, first: $first, after: $after) {
  nodes { ... on Dataset { name } } endCursor hasNextPage } }`

type searchScanAnswer struct {
	Data struct {
		Search struct {
			Nodes       []struct{ Name string }
			EndCursor   *string
			HasNextPage bool
		}
	}
	Errors []struct {
		Extensions struct{ Code string }
	}
}

// Hidden matches that sort before the visible ones (2,100: more than the 2,000 a page used to scan, and several rounds of lineage.searchBatch) must neither empty a page
// nor show in hasNextPage or the cursor: a page scans on to the visible hits, and a search that matches only
// hidden datasets looks exactly like one that matches nothing.
func TestSearchScansPastHiddenHits(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	tok := strings.ToLower(testenv.Token(6))
	var rows []any
	for i := range 2100 {
		name := fmt.Sprintf("pua.%sscan.%04d", tok, i) // outside the narrow principals' "pub" prefix
		w.secrets = append(w.secrets, name)
		rows = append(rows, map[string]any{"key": graph.DatasetKey(w.fx.Env, w.fx.NS, name), "name": name,
			"ident": graph.DatasetIdent(w.fx.Env, w.fx.NS, name)})
	}
	if _, err := neo4j.ExecuteQuery(t.Context(), w.fx.Store.Driver, `UNWIND $rows AS row
		MERGE (d:Dataset {key: row.key}) SET d.namespace = $ns, d.name = row.name, d.env = $env, d.tags = [],
			d.createdAt = 0, d.updatedAt = 0
		MERGE (n:DatasetName {ident: row.ident}) SET n.namespace = $ns, n.name = row.name, n.env = $env
		MERGE (n)-[r:NAMES]->(d) SET r.kind = 'PRIMARY', r.validFrom = 0, r.validTo = $open`,
		map[string]any{"rows": rows, "ns": w.fx.NS, "env": w.fx.Env, "open": graph.OpenEnd},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(w.fx.Store.Database)); err != nil {
		t.Fatal(err)
	}
	w.fx.Dataset("pub." + tok + "scan.a")
	w.fx.Dataset("pub." + tok + "scan.b")

	ask := func(p, q string, after *string) searchScanAnswer {
		t.Helper()
		vars := map[string]any{"q": q, "first": 1}
		if after != nil {
			vars["after"] = *after
		}
		body := w.post(p, searchScanQ, vars)
		if p != w.admin {
			w.noLeak("search as "+p, body)
		}
		var a searchScanAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%s: %s", err, body)
		}
		return a
	}
	first := ask(w.narrow, tok+"scan", nil)
	if s := first.Data.Search; len(s.Nodes) != 1 || s.Nodes[0].Name != "pub."+tok+"scan.a" || !s.HasNextPage || s.EndCursor == nil {
		t.Fatalf("first page behind 2,100 hidden hits: %+v", s)
	}
	second := ask(w.narrow, tok+"scan", first.Data.Search.EndCursor)
	if s := second.Data.Search; len(s.Nodes) != 1 || s.Nodes[0].Name != "pub."+tok+"scan.b" || s.HasNextPage {
		t.Fatalf("second page: %+v", s)
	}
	if other := ask(w.narrow2, tok+"scan", first.Data.Search.EndCursor); len(other.Errors) == 0 ||
		other.Errors[0].Extensions.Code != "BAD_REQUEST" {
		t.Fatalf("another principal's cursor was accepted: %+v", other)
	}
	onlyHidden, nothing := ask(w.narrow, "pua."+tok, nil).Data.Search, ask(w.narrow, "nomatch"+tok, nil).Data.Search
	if len(onlyHidden.Nodes) != 0 || onlyHidden.HasNextPage || onlyHidden.EndCursor != nil ||
		fmt.Sprintf("%+v", onlyHidden) != fmt.Sprintf("%+v", nothing) {
		t.Fatalf("a search matching only hidden datasets differs from one matching nothing: %+v vs %+v", onlyHidden, nothing)
	}
	if a := ask(w.admin, tok+"scan", nil).Data.Search; len(a.Nodes) != 1 || a.Nodes[0].Name != fmt.Sprintf("pua.%sscan.0000", tok) {
		t.Fatalf("admin should see the hidden datasets first: %+v", a)
	}
}
