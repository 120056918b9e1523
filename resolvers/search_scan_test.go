package resolvers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/search"
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
		MERGE (d:Dataset {key: row.key}) SET d.namespace = $ns, d.name = row.name, d.searchName = toLower(row.name), d.env = $env, d.tags = [],
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

// bulkHidden writes datasets named names (outside the narrow principals' "pub" prefix) in one query.
func (w *world) bulkHidden(names []string) {
	w.t.Helper()
	var rows []any
	for _, name := range names {
		w.secrets = append(w.secrets, name)
		rows = append(rows, map[string]any{"key": graph.DatasetKey(w.fx.Env, w.fx.NS, name), "name": name,
			"ident": graph.DatasetIdent(w.fx.Env, w.fx.NS, name)})
	}
	if _, err := neo4j.ExecuteQuery(w.t.Context(), w.fx.Store.Driver, `UNWIND $rows AS row
		MERGE (d:Dataset {key: row.key}) SET d.namespace = $ns, d.name = row.name, d.searchName = toLower(row.name), d.env = $env, d.tags = [],
			d.createdAt = 0, d.updatedAt = 0
		MERGE (n:DatasetName {ident: row.ident}) SET n.namespace = $ns, n.name = row.name, n.env = $env
		MERGE (n)-[r:NAMES]->(d) SET r.kind = 'PRIMARY', r.validFrom = 0, r.validTo = $open`,
		map[string]any{"rows": rows, "ns": w.fx.NS, "env": w.fx.Env, "open": graph.OpenEnd},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(w.fx.Store.Database)); err != nil {
		w.t.Fatal(err)
	}
}

// scanWorld writes 3,000 hidden datasets "pua.<tok>.kNNNN", 3,000 "pua.<tok>.mNNNN" and the visible
// "pub.<tok>.kv", which sorts after all of them; it returns tok.
func scanWorld(w *world) string {
	tok := strings.ToLower(testenv.Token(6))
	var names []string
	for i := range 3000 {
		names = append(names, fmt.Sprintf("pua.%s.k%04d", tok, i), fmt.Sprintf("pua.%s.m%04d", tok, i))
	}
	w.bulkHidden(names)
	w.fx.Dataset("pub." + tok + ".kv")
	return tok
}

// TestSearchScanBounded (issue 13 item 12): a search page scans at most search.DefaultSearchScanPerPage hits
// and all search fields of one request at most search.DefaultSearchScanPerRequest together; a page that reaches
// a bound ends with hasNextPage and a cursor from which paging on finds the rest.
func TestSearchScanBounded(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	tok := scanWorld(w)
	ask := func(q string, after *string) searchScanAnswer {
		t.Helper()
		vars := map[string]any{"q": q, "first": 1}
		if after != nil {
			vars["after"] = *after
		}
		body := w.post(w.narrow, searchScanQ, vars)
		w.noLeak("bounded search", body)
		var a searchScanAnswer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%s: %s", err, body)
		}
		return a
	}
	// 6,000 hidden hits before the visible one: the first page stops at 5,000, the next finds it.
	first := ask(tok+".", nil).Data.Search
	if len(first.Nodes) != 0 || !first.HasNextPage || first.EndCursor == nil {
		t.Fatalf("a page behind 6,000 hidden hits should end at the %d-hit scan bound with a cursor: %+v",
			search.DefaultSearchScanPerPage, first)
	}
	second := ask(tok+".", first.EndCursor).Data.Search
	if len(second.Nodes) != 1 || second.Nodes[0].Name != "pub."+tok+".kv" || second.HasNextPage {
		t.Fatalf("the page after the scan bound: %+v, want the visible hit and no next page", second)
	}
	// Four aliased searches, each behind 3,000 hidden hits: together they may scan 10,000, not 12,004.
	q := `query($q: String!) {`
	for i := range 4 {
		q += fmt.Sprintf(" s%d: search(query: $q, first: 1) { nodes { ... on Dataset { name } } endCursor hasNextPage }", i)
	}
	body := w.post(w.narrow, q+" }", map[string]any{"q": tok + ".k"})
	w.noLeak("aliased searches", body)
	var r struct {
		Data map[string]struct {
			Nodes       []struct{ Name string }
			EndCursor   *string
			HasNextPage bool
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Data) != 4 {
		t.Fatalf("%v: %s", err, body)
	}
	complete := 0
	for alias, s := range r.Data {
		switch {
		case len(s.Nodes) == 1 && !s.HasNextPage:
			complete++
		case len(s.Nodes) == 0 && s.HasNextPage && s.EndCursor != nil:
		default:
			t.Errorf("%s: %+v, want the visible hit or an empty page with a cursor", alias, s)
		}
	}
	if complete == 4 {
		t.Errorf("four aliased searches each scanned 3,001 hits, beyond the request's %d: %s",
			search.DefaultSearchScanPerRequest, body)
	}
}

// TestSearchScanRatePerPrincipal (issue 13 item 12): a principal whose searches scanned more than its rate
// allows waits; another principal does not.
func TestSearchScanRatePerPrincipal(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit, search: func(c *search.Config) { c.SearchScanPerPrincipal = 2000 }})
	tok := scanWorld(w)
	timed := func(p string) time.Duration {
		t0 := time.Now()
		body := w.post(p, searchScanQ, map[string]any{"q": tok + ".k", "first": 1})
		w.noLeak("rate-limited search", body)
		if !strings.Contains(string(body), "pub."+tok+".kv") {
			t.Fatalf("the search lost its visible hit: %s", body)
		}
		return time.Since(t0)
	}
	// A limit shared between principals would hold the three searches' 9,003 hits to 4,000 + 2,000/s: 2.5 s from
	// the first search's start at least, however long the scans took. With a bucket of its own the third search
	// runs at once, so the three take less, unless the scans alone are that slow (a loaded machine): then the
	// attempt tells nothing either way and, once both buckets have refilled, is made again (at most 3 times).
	var tries []string
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(2100 * time.Millisecond) // 4,000 hits at 2,000/s: both buckets full again
		}
		first := timed(w.narrow) // 3,001 hits of a 4,000 burst
		slow := timed(w.narrow)
		other := timed(w.narrow2)
		// The bucket refills while the searches scan, so on a loaded machine the wait shrinks: 6,002 hits against a
		// 4,000 burst at 2,000/s need 1.001 s from the first search's start, so the second lasts at least
		// 1.001 s - first (less a margin for the clock around the requests).
		if want := 1001*time.Millisecond - first - 50*time.Millisecond; slow < want {
			t.Fatalf("the second search of 3,001 hits at 2,000 hits/s took %s (the first %s), want at least %s: not rate limited",
				slow, first, want)
		}
		since := first + slow + other
		if since < 2450*time.Millisecond {
			return
		}
		tries = append(tries, fmt.Sprintf("another principal's search took %s (the limited one %s; %s in all)", other, slow, since))
	}
	t.Errorf("in each of 3 attempts the searches took at least a shared limit's 2.5 s: limits must be per principal\n%s",
		strings.Join(tries, "\n"))
}
