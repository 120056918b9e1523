package apitoken

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Unauthenticated refusals are cheap (issue 13 item 17): through the middleware, many requests with unknown API
// tokens read Neo4j at most once per token id within the TTL, and a token created meanwhile is accepted at once.
func TestUnknownTokensCostOneLookupPerIDWithinTheTTL(t *testing.T) {
	ts, clk, owner, cd := newCachedTokenStore(t)
	a, err := authn.NewAuthenticator(authn.Config{HTTPTimeout: time.Second}, ts, nil, clk.Now, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	h := authn.Middleware(a.WithMetrics(authn.NewMetrics(prometheus.NewRegistry())), nil, discardLog())(echoPrincipal())
	unknown := []string{
		"hw_00000000000000a1_" + strings.Repeat("A", tokenSecretLen),
		"hw_00000000000000a2_" + strings.Repeat("B", tokenSecretLen),
		"hw_00000000000000a3_" + strings.Repeat("C", tokenSecretLen),
	}
	cd.Reads()
	for i := range 300 {
		if r := call(t, h, http.MethodPost, "/api/v1/lineage", "Bearer "+unknown[i%len(unknown)]); r.status != http.StatusUnauthorized {
			t.Fatalf("unknown token: %d %s", r.status, r.body)
		}
	}
	if n := cd.Reads(); n > int64(len(unknown)) {
		t.Fatalf("300 refusals of %d unknown ids read Neo4j %d times, want at most %d", len(unknown), n, len(unknown))
	}
	tok, _, err := ts.Create(t.Context(), NewToken{Owner: owner, Kind: authn.KindProducer})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, h, http.MethodPost, "/api/v1/lineage", "Bearer "+tok); r.status != http.StatusOK {
		t.Fatalf("a token created after the refusals: %d %s", r.status, r.body)
	}
	cd.Reads()
	clk.Add(testTokenCacheTTL)
	for _, u := range unknown {
		call(t, h, http.MethodPost, "/api/v1/lineage", "Bearer "+u)
		call(t, h, http.MethodPost, "/api/v1/lineage", "Bearer "+u)
	}
	if n := cd.Reads(); n != int64(len(unknown)) {
		t.Fatalf("after the TTL: %d reads, want one per id (%d)", n, len(unknown))
	}
}

// BenchmarkUnknownTokenRefusal measures refusing a repeated unknown API token through the middleware, against the
// real Neo4j token store with its cache (issue 13 item 17).
func BenchmarkUnknownTokenRefusal(b *testing.B) {
	plain := NewStore(testenv.Store(b), time.Now)
	clk := &testClock{now: time.Now()}
	ts := NewStore(plain.store, clk.Now).WithCache(testTokenCacheTTL)
	a, err := authn.NewAuthenticator(authn.Config{HTTPTimeout: time.Second}, ts, nil, clk.Now, discardLog())
	if err != nil {
		b.Fatal(err)
	}
	h := authn.Middleware(a, nil, discardLog())(echoPrincipal())
	bad := "Bearer hw_00000000000000b1_" + strings.Repeat("A", tokenSecretLen)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/lineage", nil)
		req.Header.Set("Authorization", bad)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			b.Fatal(rec.Code)
		}
	}
}
