package authn

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// Public error codes and messages of authentication failures.
const (
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeUnavailable     = "UNAVAILABLE"
	CodeForbidden       = "FORBIDDEN"
	msgInvalid          = "invalid or expired token"
	msgMissing          = "missing bearer token"
	msgUnavailable      = "authentication is temporarily unavailable"
	retryAfterSeconds   = "5"
)

// Middleware authenticates every request for which open returns false, and puts the principal (and the roles
// its token claims) into the request context with authz.WithPrincipal and authz.WithClaimedRoles. It answers 401
// with `WWW-Authenticate: Bearer` and {"error":{"code":"UNAUTHENTICATED","message":...}} when authentication
// fails, and 503 when a backend needed to decide is down. Open requests pass through untouched. Refusals of
// invalid tokens are logged at INFO at most refusalLogPerSecond times a second (refusallog.go).
func Middleware(a *Authenticator, open func(*http.Request) bool, log *slog.Logger) func(http.Handler) http.Handler {
	clock := a.clock
	if clock == nil {
		clock = time.Now
	}
	refusals := newSampledLog(log, clock)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if open != nil && open(r) {
				next.ServeHTTP(w, r)
				return
			}
			id, err := a.Authenticate(r.Context(), r)
			if err != nil {
				a.metrics.observe(methodOf(r), resultOf(err))
				refuse(w, r, err, log, refusals)
				return
			}
			if id.Principal.Restricted() && !RestrictedMayCall(r) {
				a.metrics.observe(id.Method, resultRestricted)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": CodeForbidden,
					"message": "an exchanged token may only send lineage events (POST /api/v1/lineage, POST /api/v1/lineage/batch)"}})
				return
			}
			a.metrics.observe(id.Method, resultOK)
			ctx := authz.WithPrincipal(r.Context(), id.Principal)
			ctx = authz.WithClaimedRoles(ctx, id.Principal.Subject, id.Roles)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// RestrictedMayCall reports whether a restricted principal (an exchanged token, ADR 0051) may make the request:
// sending lineage events, nothing else. Its grants allow it nothing else either (grantpolicy); refusing here
// first keeps it from every endpoint whose rules are not grants (a user's own tokens, its own producer figures).
func RestrictedMayCall(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/api/v1/lineage" || r.URL.Path == "/api/v1/lineage/batch")
}

func resultOf(err error) string {
	switch {
	case errors.Is(err, ErrUnavailable):
		return resultUnavailable
	case errors.Is(err, ErrMissing):
		return resultMissing
	}
	return resultInvalid
}

// methodOf guesses the method of a refused request from the token's shape (for metrics only).
func methodOf(r *http.Request) string {
	tok, err := bearer(r)
	switch {
	case err != nil:
		return "none"
	case IsAPIToken(tok):
		return MethodAPIToken
	}
	return MethodJWT
}

func refuse(w http.ResponseWriter, r *http.Request, err error, log *slog.Logger, refusals *sampledLog) {
	status, code, msg := http.StatusUnauthorized, CodeUnauthenticated, msgInvalid
	switch {
	case errors.Is(err, ErrUnavailable):
		status, code, msg = http.StatusServiceUnavailable, CodeUnavailable, msgUnavailable
		w.Header().Set("Retry-After", retryAfterSeconds)
		log.Warn("authentication backend unavailable", "path", r.URL.Path, "err", err)
	case errors.Is(err, ErrMissing):
		msg = msgMissing
		w.Header().Set("WWW-Authenticate", `Bearer realm="headwater"`)
	default:
		w.Header().Set("WWW-Authenticate", `Bearer realm="headwater", error="invalid_token"`)
		refusals.info("authentication refused", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// OpenPaths returns an open predicate for GET and HEAD requests to exactly these paths (e.g. DefaultOpenPaths).
func OpenPaths(paths ...string) func(*http.Request) bool {
	set := map[string]bool{}
	for _, p := range paths {
		set[p] = true
	}
	return func(r *http.Request) bool {
		return (r.Method == http.MethodGet || r.Method == http.MethodHead) && set[r.URL.Path]
	}
}

// OpenSubtrees returns an open predicate for GET and HEAD requests to a path below one of these prefixes (each
// ending in "/"), or to a prefix without its slash: pages whose files hold no data, such as the lineage explorer.
func OpenSubtrees(prefixes ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return false
		}
		for _, p := range prefixes {
			if strings.HasPrefix(r.URL.Path, p) || r.URL.Path == strings.TrimSuffix(p, "/") {
				return true
			}
		}
		return false
	}
}

// AnyOpen is open when any of the predicates is.
func AnyOpen(open ...func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		for _, o := range open {
			if o(r) {
				return true
			}
		}
		return false
	}
}

// DefaultOpenPaths are the paths open without a token on the API listener: health, readiness and the GraphiQL
// page (GET / and /graphiql). /metrics is on its own listener, which this middleware does not wrap.
func DefaultOpenPaths() []string { return []string{"/healthz", "/readyz", "/", "/graphiql"} }

// DefaultOpenSubtrees are the subtrees open without a token: the lineage explorer's static files (package web).
// Its page sends the user's bearer on every GraphQL request; the files themselves hold no data.
func DefaultOpenSubtrees() []string { return []string{"/explore/"} }

// DefaultOpen is the API listener's open predicate: DefaultOpenPaths and DefaultOpenSubtrees.
func DefaultOpen() func(*http.Request) bool {
	return AnyOpen(OpenPaths(DefaultOpenPaths()...), OpenSubtrees(DefaultOpenSubtrees()...))
}
