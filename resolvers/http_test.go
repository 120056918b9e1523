package resolvers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/lineage"
)

func (h *harness) get(params url.Values) gqlResponse {
	h.t.Helper()
	resp, err := http.Get(h.srv.URL + "?" + params.Encode())
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r gqlResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		h.t.Fatal(err)
	}
	return r
}

func TestGETAndPersistedQueries(t *testing.T) {
	h := newHarness(t)
	h.fx.Dataset("a")
	q := `query($ns: String!) { dataset(namespace: $ns, name: "a") { name } }`
	vars, _ := json.Marshal(map[string]any{"ns": h.fx.NS})
	r := h.get(url.Values{"query": {q}, "variables": {string(vars)}})
	if len(r.Errors) != 0 || !strings.Contains(string(r.Data), `"name":"a"`) {
		t.Fatalf("GET: %s %+v", r.Data, r.Errors)
	}

	sum := sha256.Sum256([]byte(q))
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	r = h.get(url.Values{"extensions": {ext}, "variables": {string(vars)}})
	if len(r.Errors) != 1 || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %+v", r.Errors)
	}
	if r = h.get(url.Values{"query": {q}, "extensions": {ext}, "variables": {string(vars)}}); len(r.Errors) != 0 {
		t.Fatalf("register: %+v", r.Errors)
	}
	r = h.get(url.Values{"extensions": {ext}, "variables": {string(vars)}})
	if len(r.Errors) != 0 || !strings.Contains(string(r.Data), `"name":"a"`) {
		t.Fatalf("hash only after registering: %s %+v", r.Data, r.Errors)
	}
}

func TestErrorCodes(t *testing.T) {
	h := newHarness(t)
	deep := `{ run(id: "x") { ` + strings.Repeat("parent { ", guard.MaxQueryDepth) + "runId" + strings.Repeat(" }", guard.MaxQueryDepth+2)
	var b strings.Builder
	b.WriteString("{")
	for i := range guard.MaxComplexity/10 + 1 { // complexity 10 each, within the token and field limits
		fmt.Fprintf(&b, " r%d: run(id: \"x\") { id state startedAt endedAt conflictingStates job { id name namespace } }", i)
	}
	wide := b.String() + " }"
	cases := map[string]struct {
		query string
		vars  map[string]any
		code  string
	}{
		"validation":     {`{ nope }`, nil, guard.CodeBadRequest},
		"bad argument":   {lineageQuery, map[string]any{"start": dsStart("x", "y"), "dir": "BOTH", "depth": 0}, guard.CodeBadRequest},
		"two starts":     {lineageQuery, map[string]any{"start": map[string]any{"dataset": map[string]any{"namespace": "x", "name": "y"}, "job": map[string]any{"namespace": "x", "name": "y"}}, "dir": "BOTH", "depth": 1}, guard.CodeBadRequest},
		"depth limit":    {deep, nil, guard.CodeComplexity},
		"complexity":     {wide, nil, guard.CodeComplexity},
		"unknown job":    {`query($ns: String!) { job(namespace: $ns, name: "nope") { name } }`, map[string]any{"ns": h.fx.NS}, guard.CodeNotFound},
		"bad page":       {`{ search(query: "x", first: 1000) { hasNextPage } }`, nil, guard.CodeBadRequest},
		"garbage cursor": {lineageQuery, map[string]any{"start": dsStart("x", "y"), "dir": "BOTH", "depth": 1, "after": "garbage"}, guard.CodeBadRequest},
	}
	for name, c := range cases {
		errs := h.query("", c.query, c.vars, nil)
		if len(errs) == 0 || errs[0].code() != c.code {
			t.Errorf("%s: errors = %+v, want %s", name, errs, c.code)
		}
	}
}

func TestStoreDownIsUnavailableWithoutInternals(t *testing.T) {
	drv, err := neo4j.NewDriverWithContext("bolt://127.0.0.1:1", neo4j.NoAuth(), func(c *config.Config) {
		c.MaxTransactionRetryTime = 100 * time.Millisecond
		c.ConnectionAcquisitionTimeout = 500 * time.Millisecond
		c.SocketConnectTimeout = 200 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	hd, err := testDeps{Store: &graph.Store{Driver: drv, Database: "neo4j"}, Lineage: lineage.Config{CursorKey: testCursorKey}}.handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hd)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"query":"{ dataset(namespace: \"x\", name: \"y\") { name } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r gqlResponse
	_ = json.Unmarshal(body, &r)
	if len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeUnavailable {
		t.Fatalf("errors = %s", body)
	}
	if strings.Contains(string(body), "127.0.0.1") || strings.Contains(string(body), "MATCH") {
		t.Fatalf("internal detail leaked: %s", body)
	}
}

func TestGraphiQLPage(t *testing.T) {
	rec := httptest.NewRecorder()
	GraphiQL("/graphql").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"/graphql"`) || !strings.Contains(rec.Body.String(), "graphiql") {
		t.Fatalf("page: %d %s", rec.Code, rec.Body.String())
	}
}
