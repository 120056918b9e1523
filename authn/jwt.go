package authn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/headwater-data/headwater/authz"
)

// signingMethods are the accepted JWT algorithms: asymmetric only, so a key published in the JWKS can never be
// used as an HMAC secret, and never "none".
func signingMethods() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// JWTVerifier validates OIDC bearer tokens against the issuer's JWKS.
type JWTVerifier struct {
	cfg    Config
	keys   *jwksCache
	parser *jwt.Parser
}

// NewJWTVerifier returns a verifier; keys are fetched on first use. client nil uses a default client with the
// configured timeout.
func NewJWTVerifier(cfg Config, client *http.Client, clock func() time.Time) *JWTVerifier {
	if client == nil {
		client = &http.Client{Timeout: cfg.HTTPTimeout}
	}
	p := jwt.NewParser(jwt.WithValidMethods(signingMethods()), jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience), jwt.WithLeeway(cfg.ClockSkew), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(clock))
	return &JWTVerifier{cfg: cfg, keys: newJWKSCache(cfg, client, clock), parser: p}
}

// Verify validates the token and returns the identity it carries: principal from the subject claim (kind
// "user"), roles from the roles claim.
func (v *JWTVerifier) Verify(ctx context.Context, raw string) (Identity, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.keys.key(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return Identity{}, err
		}
		return Identity{}, fmt.Errorf("%w: jwt: %w", ErrInvalid, err)
	}
	sub, _ := claimAt(claims, v.cfg.SubjectClaim).(string)
	if sub == "" || sub == authz.AnonymousSubject {
		return Identity{}, fmt.Errorf("%w: jwt without a usable %s claim", ErrInvalid, v.cfg.SubjectClaim)
	}
	return Identity{Principal: authz.Principal{Subject: sub, Kind: KindUser}, Method: MethodJWT,
		Roles: stringsAt(claims, v.cfg.RolesClaim)}, nil
}

// claimAt follows a dot path ("realm_access.roles") into the claims.
func claimAt(claims map[string]any, path string) any {
	if path == "" {
		return nil
	}
	var cur any = claims
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// stringsAt reads a claim that is a string list (or a single string, or space-separated like "scope").
func stringsAt(claims map[string]any, path string) []string {
	switch v := claimAt(claims, path).(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
