package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxJWKSBytes bounds discovery and JWKS responses.
const maxJWKSBytes = 1 << 20

// jwksCache holds the issuer's signing keys by key id. It fetches them on first use, refetches when they are
// older than maxAge, and on an unknown key id refetches at most once per minRefresh (so forged key ids cannot
// make Headwater hammer the issuer).
type jwksCache struct {
	cfg    Config
	client *http.Client
	clock  func() time.Time

	mu          sync.Mutex
	url         string // resolved JWKS URL
	keys        map[string]jose.JSONWebKey
	fetchedAt   time.Time
	lastAttempt time.Time
}

func newJWKSCache(cfg Config, client *http.Client, clock func() time.Time) *jwksCache {
	return &jwksCache{cfg: cfg, client: client, clock: clock, url: cfg.JWKSURL}
}

// key returns the verification key for (kid, alg).
func (c *jwksCache) key(ctx context.Context, kid, alg string) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	stale := c.keys == nil || now.Sub(c.fetchedAt) > c.cfg.JWKSMaxAge
	k, ok := c.lookup(kid)
	mayFetch := c.lastAttempt.IsZero() || now.Sub(c.lastAttempt) >= c.cfg.JWKSMinRefresh
	switch {
	case (stale || !ok) && mayFetch:
		if err := c.refresh(ctx, now); err != nil && c.keys == nil {
			return nil, err
		}
		k, ok = c.lookup(kid)
	case c.keys == nil:
		// The last fetch failed moments ago: do not queue every request behind another attempt.
		return nil, fmt.Errorf("%w: jwks not fetched yet, retrying after %s", ErrUnavailable, c.cfg.JWKSMinRefresh)
	}
	if !ok {
		return nil, fmt.Errorf("%w: no signing key %q at the issuer", ErrInvalid, kid)
	}
	if k.Algorithm != "" && k.Algorithm != alg {
		return nil, fmt.Errorf("%w: key %q is for %s, token says %s", ErrInvalid, kid, k.Algorithm, alg)
	}
	return k.Key, nil
}

// lookup finds a signing key; a token without kid matches only a JWKS with exactly one signing key.
func (c *jwksCache) lookup(kid string) (jose.JSONWebKey, bool) {
	if kid != "" {
		k, ok := c.keys[kid]
		return k, ok
	}
	if len(c.keys) == 1 {
		for _, k := range c.keys {
			return k, true
		}
	}
	return jose.JSONWebKey{}, false
}

func (c *jwksCache) refresh(ctx context.Context, now time.Time) error {
	c.lastAttempt = now
	if c.url == "" {
		u, err := c.discover(ctx)
		if err != nil {
			return err
		}
		c.url = u
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := c.getJSON(ctx, c.url, &raw); err != nil {
		return err
	}
	keys := map[string]jose.JSONWebKey{}
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(r, &k) != nil || !k.Valid() || (k.Use != "" && k.Use != "sig") {
			continue // unsupported or encryption keys are skipped, not fatal
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		keys[k.KeyID] = k
	}
	c.keys, c.fetchedAt = keys, now
	return nil
}

// discover reads jwks_uri from the issuer's OpenID configuration.
func (c *jwksCache) discover(ctx context.Context) (string, error) {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	u := strings.TrimSuffix(c.cfg.Issuer, "/") + "/.well-known/openid-configuration"
	if err := c.getJSON(ctx, u, &doc); err != nil {
		return "", err
	}
	if doc.Issuer != c.cfg.Issuer || doc.JWKSURI == "" {
		return "", fmt.Errorf("%w: discovery at %s names issuer %q and jwks_uri %q", ErrUnavailable, u, doc.Issuer, doc.JWKSURI)
	}
	if err := checkURL("jwks_uri", doc.JWKSURI); err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return doc.JWKSURI, nil
}

func (c *jwksCache) getJSON(ctx context.Context, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: fetch %s: %w", ErrUnavailable, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: fetch %s: status %d", ErrUnavailable, url, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(into); err != nil {
		return fmt.Errorf("%w: decode %s: %w", ErrUnavailable, url, err)
	}
	return nil
}
