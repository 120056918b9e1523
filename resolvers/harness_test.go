package resolvers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/truststore"
)

var zero time.Time

const testCursorKey = "test-cursor-key-0123456789abcdef0123456789"

// principalHeader carries the test principal; production attaches principals in the auth middleware.
const principalHeader = "X-Test-Principal"

type harness struct {
	t   *testing.T
	fx  *lineagetest.Fixture
	srv *httptest.Server
	reg *prometheus.Registry
}

type option func(*testDeps)

func withRedis(rdb *redis.Client) option { return func(d *testDeps) { d.Redis = rdb } }
func withConfig(c lineage.Config) option {
	return func(d *testDeps) { key := d.Lineage.CursorKey; d.Lineage = c; d.Lineage.CursorKey = key }
}
func withClock(c func() time.Time) option { return func(d *testDeps) { d.Clock = c } }

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	store := testenv.Store(t)
	fx := lineagetest.New(t, store)
	fx.Principal = "alice" // the harness's default caller sends the fixture's events
	reg := prometheus.NewRegistry()
	ts, err := trust.NewService(truststore.NewStore(store), nil, trust.Config{}, fx.Clock())
	if err != nil {
		t.Fatal(err)
	}
	d := testDeps{Store: store, Registerer: reg, Clock: fx.Clock(), Lineage: lineage.Config{CursorKey: testCursorKey}, Trust: ts}
	for _, o := range opts {
		o(&d)
	}
	return &harness{t: t, fx: fx, srv: serveAs(t, d, "alice"), reg: reg}
}

// serveAs serves the GraphQL handler of d with the principal named by the test header (fallback when absent):
// production attaches principals in the auth middleware.
func serveAs(t *testing.T, d testDeps, fallback string) *httptest.Server {
	t.Helper()
	h, err := d.handler()
	if err != nil {
		t.Fatalf("new handler: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := authz.Principal{Subject: r.Header.Get(principalHeader), Kind: "user"}
		if p.Subject == "" {
			p.Subject = fallback
		}
		h.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

func (e gqlError) code() string { s, _ := e.Extensions["code"].(string); return s }

// query posts a GraphQL request as principal (default alice) and decodes data into out.
func (h *harness) query(principal, q string, vars map[string]any, out any) []gqlError {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if principal != "" {
		req.Header.Set(principalHeader, principal)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	var r gqlResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		h.t.Fatalf("decode response: %v", err)
	}
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			h.t.Fatalf("decode data: %v\n%s", err, r.Data)
		}
	}
	return r.Errors
}

// mustQuery is query that fails the test on any GraphQL error.
func (h *harness) mustQuery(q string, vars map[string]any, out any) {
	h.t.Helper()
	if errs := h.query("", q, vars, out); len(errs) > 0 {
		h.t.Fatalf("graphql errors: %+v", errs)
	}
}
