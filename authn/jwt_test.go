package authn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// idp is an OIDC issuer served by httptest: discovery, a JWKS with the keys it currently publishes, and a
// request counter.
type idp struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int64
	down    atomic.Bool
}

func newIdP(t *testing.T) *idp {
	t.Helper()
	i := &idp{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": i.srv.URL, "jwks_uri": i.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		i.fetches.Add(1)
		if i.down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		i.mu.Lock()
		defer i.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: i.keys})
	})
	i.srv = httptest.NewServer(mux)
	t.Cleanup(i.srv.Close)
	return i
}

func (i *idp) publish(kid, alg string, pub any) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys = append(i.keys, jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: alg, Use: "sig"})
}

func testRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t *testing.T, m jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type jwtEnv struct {
	idp   *idp
	cfg   Config
	clock *testClock
	v     *JWTVerifier
	rsa   *rsa.PrivateKey
	now   time.Time
}

func newJWTEnv(t *testing.T, discover bool) *jwtEnv {
	i := newIdP(t)
	k := testRSAKey(t)
	i.publish("k1", "RS256", &k.PublicKey)
	cfg := Config{Issuer: i.srv.URL, Audience: "headwater", ClockSkew: time.Minute, SubjectClaim: "sub",
		RolesClaim: "realm_access.roles", JWKSMaxAge: time.Hour, JWKSMinRefresh: 30 * time.Second, HTTPTimeout: 5 * time.Second}
	if !discover {
		cfg.JWKSURL = i.srv.URL + "/jwks"
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	clk := &testClock{now: now}
	return &jwtEnv{idp: i, cfg: cfg, clock: clk, v: NewJWTVerifier(cfg, i.srv.Client(), clk.Now), rsa: k, now: now}
}

func (e *jwtEnv) claims(mod func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{"iss": e.cfg.Issuer, "aud": "headwater", "sub": "alice@example.com",
		"iat": e.now.Add(-time.Minute).Unix(), "exp": e.now.Add(10 * time.Minute).Unix(),
		"realm_access": map[string]any{"roles": []string{"analysts", "viewers"}}}
	if mod != nil {
		mod(c)
	}
	return c
}

func TestJWTVerify(t *testing.T) {
	e := newJWTEnv(t, true)
	other := testRSAKey(t)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.idp.publish("ec1", "ES256", &ec.PublicKey)
	good := sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(nil))
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + parts[1] + "." + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, parts[2][:4]) + parts[2][4:]
	forgedPayload := parts[0] + "." + sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["sub"] = "root" }))[len(parts[0])+1:]
	forgedPayload = strings.Join([]string{parts[0], strings.Split(forgedPayload, ".")[1], parts[2]}, ".")

	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"good RS256", good, true},
		{"good ES256", sign(t, jwt.SigningMethodES256, "ec1", ec, e.claims(nil)), true},
		{"expired", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["exp"] = e.now.Add(-2 * time.Minute).Unix() })), false},
		{"expired within skew", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["exp"] = e.now.Add(-30 * time.Second).Unix() })), true},
		{"not yet valid", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["nbf"] = e.now.Add(5 * time.Minute).Unix() })), false},
		{"no exp", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { delete(c, "exp") })), false},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["aud"] = "other-service" })), false},
		{"audience list with ours", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["aud"] = []string{"x", "headwater"} })), true},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })), false},
		{"tampered signature", tampered, false},
		{"forged payload", forgedPayload, false},
		{"signed by another key under our kid", sign(t, jwt.SigningMethodRS256, "k1", other, e.claims(nil)), false},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, "nope", other, e.claims(nil)), false},
		{"alg mismatch with key", sign(t, jwt.SigningMethodRS384, "k1", e.rsa, e.claims(nil)), false},
		{"hmac with public key bytes", sign(t, jwt.SigningMethodHS256, "k1", []byte("k1-public-key-as-secret"), e.claims(nil)), false},
		{"alg none", sign(t, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, e.claims(nil)), false},
		{"anonymous subject", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { c["sub"] = "anonymous" })), false},
		{"no subject", sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(func(c jwt.MapClaims) { delete(c, "sub") })), false},
		{"garbage", "not.a.jwt", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := e.v.Verify(t.Context(), c.token)
			if c.ok {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				if id.Principal.Subject != "alice@example.com" || id.Method != MethodJWT ||
					!slices.Equal(id.Roles, []string{"analysts", "viewers"}) {
					t.Errorf("identity %+v", id)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("want ErrInvalid, got %v (identity %+v)", err, id)
			}
		})
	}
}

func TestJWKSRotationAndRefetchLimit(t *testing.T) {
	e := newJWTEnv(t, false)
	ctx := t.Context()
	if _, err := e.v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "k1", e.rsa, e.claims(nil))); err != nil {
		t.Fatal(err)
	}
	base := e.idp.fetches.Load()
	// Forged key ids: at most one refetch per JWKSMinRefresh (none right after the first fetch, one after it).
	forger := testRSAKey(t)
	forge := func(i int) {
		_, err := e.v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "forged-"+string(rune('a'+i)), forger, e.claims(nil)))
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	forge(0)
	if n := e.idp.fetches.Load() - base; n != 0 {
		t.Errorf("refetches right after a fetch: %d, want 0", n)
	}
	e.clock.Add(31 * time.Second)
	for i := range 5 {
		forge(i + 1)
	}
	if n := e.idp.fetches.Load() - base; n != 1 {
		t.Errorf("refetches for 5 unknown kids after the interval: %d, want 1", n)
	}
	// The issuer rotates in a new key: after the interval a token with it is accepted via one refetch.
	rotated, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	e.idp.publish("k2", "ES384", &rotated.PublicKey)
	e.clock.Add(31 * time.Second)
	e.now = e.clock.Now()
	if _, err := e.v.Verify(ctx, sign(t, jwt.SigningMethodES384, "k2", rotated, e.claims(nil))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	// The JWKS endpoint is down and no key was ever fetched: unavailable, not invalid.
	down := newJWTEnv(t, false)
	down.idp.down.Store(true)
	_, err := down.v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "k1", down.rsa, down.claims(nil)))
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("jwks down: %v, want ErrUnavailable", err)
	}
	// While it stays down, requests within the refresh interval do not hit it again; after the interval and
	// recovery, the keys are fetched and the token is accepted.
	tried := down.idp.fetches.Load()
	for range 3 {
		if _, err := down.v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "k1", down.rsa, down.claims(nil))); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("jwks still down: %v", err)
		}
	}
	if n := down.idp.fetches.Load() - tried; n != 0 {
		t.Errorf("fetches while down within the interval: %d, want 0", n)
	}
	down.idp.down.Store(false)
	down.clock.Add(31 * time.Second)
	if _, err := down.v.Verify(ctx, sign(t, jwt.SigningMethodRS256, "k1", down.rsa, down.claims(nil))); err != nil {
		t.Errorf("after recovery: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Issuer: "https://idp.example/realms/x", Audience: "headwater", ClockSkew: time.Minute, SubjectClaim: "sub",
		JWKSMaxAge: time.Hour, JWKSMinRefresh: 30 * time.Second, HTTPTimeout: 10 * time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if err := (Config{ClockSkew: time.Minute}).Validate(); err != nil {
		t.Errorf("api tokens only: %v", err)
	}
	bad := map[string]func(*Config){
		"no audience":      func(c *Config) { c.Audience = "" },
		"http issuer":      func(c *Config) { c.Issuer = "http://idp.example" },
		"skew too large":   func(c *Config) { c.ClockSkew = time.Hour },
		"negative skew":    func(c *Config) { c.ClockSkew = -time.Second },
		"relative jwks":    func(c *Config) { c.JWKSURL = "/jwks" },
		"no subject claim": func(c *Config) { c.SubjectClaim = "" },
		"audience alone":   func(c *Config) { c.Issuer = "" },
	}
	for name, mod := range bad {
		c := ok
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	loop := ok
	loop.Issuer, loop.JWKSURL = "http://127.0.0.1:9999", "http://localhost:9999/jwks"
	if err := loop.Validate(); err != nil {
		t.Errorf("http to loopback is allowed: %v", err)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
