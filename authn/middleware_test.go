package authn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/headwater-data/headwater/authz"
)

// fakeTokens verifies API tokens from a map (the store has its own tests against Neo4j).
type fakeTokens struct {
	tokens map[string]TokenInfo
	down   bool
}

func (f fakeTokens) Verify(_ context.Context, raw string) (TokenInfo, error) {
	if f.down {
		return TokenInfo{}, fmt.Errorf("%w: neo4j down", ErrUnavailable)
	}
	if ti, ok := f.tokens[raw]; ok {
		return ti, nil
	}
	return TokenInfo{}, fmt.Errorf("%w: unknown", ErrInvalid)
}

const goodAPIToken = "hw_0123456789abcdef_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

func echoPrincipal() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := authz.FromContext(r.Context())
		_, _ = fmt.Fprintf(w, "%s|%s|%s", p.Subject, p.Kind, strings.Join(authz.ClaimedRoles(r.Context(), p), ","))
	})
}

type result struct {
	status int
	body   string
	header http.Header
}

func call(t *testing.T, h http.Handler, method, path, auth string) result {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return result{rec.Code, string(b), rec.Header()}
}

func TestMiddleware(t *testing.T) {
	e := newJWTEnv(t, false)
	e.clock.now = time.Now().UTC()
	e.now = e.clock.now
	tokens := fakeTokens{tokens: map[string]TokenInfo{goodAPIToken: {ID: "0123456789abcdef", Owner: "spark", Kind: KindProducer}}}
	a, err := NewAuthenticator(e.cfg, tokens, e.idp.srv.Client(), e.clock.Now, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(prometheus.NewRegistry())
	h := Middleware(a.WithMetrics(m), DefaultOpen(), discardLog())(echoPrincipal())
	jwtOK := sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(nil))
	jwtExpired := sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["exp"] = e.now.Add(-time.Hour).Unix() }))
	jwtWrongAud := sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["aud"] = "x" }))

	cases := []struct {
		name, method, path, auth string
		status                   int
		body                     string
	}{
		{"healthz open", "GET", "/healthz", "", 200, "anonymous|user|"},
		{"graphiql open", "GET", "/", "", 200, "anonymous|user|"},
		{"explorer open", "GET", "/explore/", "", 200, "anonymous|user|"},
		{"explorer bare path open", "GET", "/explore", "", 200, "anonymous|user|"},
		{"explorer assets open", "GET", "/explore/assets/explorer.js", "", 200, "anonymous|user|"},
		{"explorer POST closed", "POST", "/explore/", "", 401, msgMissing},
		{"a path that only starts like the explorer closed", "GET", "/exploration", "", 401, msgMissing},
		{"graphql POST closed", "POST", "/graphql", "", 401, msgMissing},
		{"ingestion closed", "POST", "/api/v1/lineage", "", 401, msgMissing},
		{"healthz POST closed", "POST", "/healthz", "", 401, msgMissing},
		{"api token", "POST", "/api/v1/lineage", "Bearer " + goodAPIToken, 200, "spark|producer|"},
		{"jwt with roles", "POST", "/graphql", "Bearer " + jwtOK, 200, "alice@example.com|user|analysts,viewers"},
		{"bearer scheme case-insensitive", "POST", "/graphql", "bearer " + jwtOK, 200, "alice@example.com|user|analysts,viewers"},
		{"expired jwt", "POST", "/graphql", "Bearer " + jwtExpired, 401, msgInvalid},
		{"wrong audience", "POST", "/graphql", "Bearer " + jwtWrongAud, 401, msgInvalid},
		{"unknown api token", "POST", "/graphql", "Bearer hw_0123456789abcdef_" + strings.Repeat("B", 43), 401, msgInvalid},
		{"basic auth", "POST", "/graphql", "Basic YWxpY2U6cHc=", 401, msgInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, h, c.method, c.path, c.auth)
			if r.status != c.status {
				t.Fatalf("status %d, want %d (%s)", r.status, c.status, r.body)
			}
			if c.status == 200 {
				if r.body != c.body {
					t.Errorf("principal %q, want %q", r.body, c.body)
				}
				return
			}
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.body), &body); err != nil {
				t.Fatalf("body %q: %v", r.body, err)
			}
			if body.Error.Code != CodeUnauthenticated || body.Error.Message != c.body {
				t.Errorf("error %+v, want %s %q", body.Error, CodeUnauthenticated, c.body)
			}
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	for labels, want := range map[[2]string]float64{{MethodJWT, resultOK}: 2, {MethodJWT, resultInvalid}: 2,
		{MethodAPIToken, resultOK}: 1, {MethodAPIToken, resultInvalid}: 1, {"none", resultMissing}: 5, {"none", resultInvalid}: 1} {
		if got := counterValue(t, m.requests.WithLabelValues(labels[0], labels[1])); got != want {
			t.Errorf("headwater_authn_requests_total%v = %v, want %v", labels, got, want)
		}
	}
}

func TestMiddlewareUnavailableAndDev(t *testing.T) {
	down, err := NewAuthenticator(Config{}, fakeTokens{down: true}, nil, time.Now, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, Middleware(down, nil, discardLog())(echoPrincipal()), "POST", "/graphql", "Bearer "+goodAPIToken)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, CodeUnavailable) {
		t.Errorf("store down: %d %q", r.status, r.body)
	}
	if r := call(t, Middleware(down, nil, discardLog())(echoPrincipal()), "POST", "/graphql", "Bearer eyJhbGciOi.x.y"); r.status != 401 {
		t.Errorf("a jwt without oidc configured: %d", r.status)
	}
	dev, err := NewAuthenticator(Config{DevNoAuth: true}, fakeTokens{tokens: map[string]TokenInfo{goodAPIToken: {Owner: "spark", Kind: KindProducer}}}, nil, time.Now, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	h := Middleware(dev, nil, discardLog())(echoPrincipal())
	if r := call(t, h, "POST", "/graphql", ""); r.status != 200 || r.body != "anonymous|user|" {
		t.Errorf("dev without token: %d %q", r.status, r.body)
	}
	if r := call(t, h, "POST", "/graphql", "Bearer "+goodAPIToken); r.body != "spark|producer|" {
		t.Errorf("dev with a token still authenticates it: %q", r.body)
	}
	if r := call(t, h, "POST", "/graphql", "Bearer hw_bad"); r.status != 401 {
		t.Errorf("dev with a bad token: %d, want 401", r.status)
	}
	_, err = dev.AuthenticateToken(context.Background(), "hw_bad")
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("AuthenticateToken: %v", err)
	}
}

func TestDevNoAuthIsLoggedAtStart(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := NewAuthenticator(Config{DevNoAuth: true}, nil, nil, time.Now, log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "authentication is OFF") {
		t.Errorf("start log: %s", buf.String())
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
