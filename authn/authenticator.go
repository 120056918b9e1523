package authn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// Authentication methods an Identity records.
const (
	MethodAPIToken = "api-token"
	MethodJWT      = "jwt"
	MethodDev      = "dev-no-auth"
)

// Identity is an authenticated caller: the principal, roles its token claims, and how it was authenticated.
type Identity struct {
	Principal authz.Principal
	Roles     []string
	Method    string
	TokenID   string // API tokens only
}

// TokenInfo is an API token without its secret.
type TokenInfo struct {
	ID          string
	Owner       string // the principal's subject
	Kind        string // user, service or producer
	Description string
	CreatedAt   time.Time
	CreatedBy   string
	ExpiresAt   time.Time // zero: never
	RevokedAt   time.Time // zero: not revoked
	// Namespaces restrict an exchanged token to PRODUCE in them (ADR 0051); empty: the owner's grants, all.
	Namespaces []string
}

// Principal is the principal the token acts as: restricted to its namespaces when it has some.
func (t TokenInfo) Principal() authz.Principal {
	return authz.Principal{Subject: t.Owner, Kind: t.Kind, Restrict: authz.RestrictTo(t.Namespaces)}
}

// Principal kinds an API token may act as.
const (
	KindUser     = "user"
	KindService  = "service"
	KindProducer = "producer"
)

// TokenVerifier verifies Headwater API tokens (apitoken.Store).
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (TokenInfo, error)
}

// Authenticator turns a bearer token into an Identity: API tokens through the token store, JWTs through the
// issuer's JWKS when OIDC is configured.
type Authenticator struct {
	cfg     Config
	tokens  TokenVerifier
	jwt     *JWTVerifier
	log     *slog.Logger
	metrics *Metrics
	clock   func() time.Time
}

// NewAuthenticator validates cfg and returns an authenticator. client may be nil. It logs the mode once.
func NewAuthenticator(cfg Config, tokens TokenVerifier, client *http.Client, clock func() time.Time, log *slog.Logger) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{cfg: cfg, tokens: tokens, log: log, clock: clock}
	if cfg.OIDC() {
		a.jwt = NewJWTVerifier(cfg, client, clock)
	}
	if cfg.DevNoAuth {
		log.Warn("authentication is OFF for requests without a token (dev-no-auth): they act as the anonymous principal")
	}
	log.Info("authentication configured", "apiTokens", tokens != nil, "oidc", cfg.OIDC(), "issuer", cfg.Issuer,
		"audience", cfg.Audience, "devNoAuth", cfg.DevNoAuth)
	return a, nil
}

// Authenticate authenticates a request from its Authorization header.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (Identity, error) {
	raw, err := bearer(r)
	if errors.Is(err, ErrMissing) && a.cfg.DevNoAuth {
		return Identity{Principal: authz.Principal{Subject: authz.AnonymousSubject, Kind: KindUser}, Method: MethodDev}, nil
	}
	if err != nil {
		return Identity{}, err
	}
	return a.AuthenticateToken(ctx, raw)
}

// AuthenticateToken authenticates a raw bearer token.
func (a *Authenticator) AuthenticateToken(ctx context.Context, raw string) (Identity, error) {
	if IsAPIToken(raw) {
		if a.tokens == nil {
			return Identity{}, fmt.Errorf("%w: api tokens are not configured", ErrInvalid)
		}
		info, err := a.tokens.Verify(ctx, raw)
		if err != nil {
			return Identity{}, err
		}
		return Identity{Principal: info.Principal(), Method: MethodAPIToken, TokenID: info.ID}, nil
	}
	if a.jwt == nil {
		return Identity{}, fmt.Errorf("%w: not an api token and oidc is not configured", ErrInvalid)
	}
	return a.jwt.Verify(ctx, raw)
}

// APITokenPrefix starts every Headwater API token ("hw_<id>_<secret>", apitoken).
const APITokenPrefix = "hw_"

// IsAPIToken reports whether raw has the API token shape (it may still be invalid).
func IsAPIToken(raw string) bool { return strings.HasPrefix(raw, APITokenPrefix) }

// maxTokenLen bounds a bearer token.
const maxTokenLen = 16 << 10

// bearer extracts the token of "Authorization: Bearer <token>".
func bearer(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", ErrMissing
	}
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > maxTokenLen {
		return "", fmt.Errorf("%w: authorization header is not a bearer token", ErrInvalid)
	}
	return tok, nil
}
