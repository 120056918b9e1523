// Package exchange is RFC 8693 token exchange for Headwater's producers (ADR 0051): a scheduler or an engine that
// holds one long-lived service credential (an API token) exchanges it, per run, for a short-lived token that may
// PRODUCE only in the namespaces the request names, and only where the service's own grants allow it. The
// exchanged token is an API token restricted to those namespaces (authz.Principal.Restrict, applied by the grant
// policy to every check) and to the lineage endpoints (authn.RestrictedMayCall). Every exchange, granted or
// refused, is audited; one that cannot be audited is not granted.
package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
)

// The endpoint, the RFC 8693 names it speaks, and its limits.
const (
	Path            = "/api/v1/token/exchange"
	GrantType       = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccess = "urn:ietf:params:oauth:token-type:access_token"
	// ScopePrefix starts every scope entry: "produce:<namespace>" (as producers send it; canonicalised).
	ScopePrefix = "produce:"
	// DefaultLifetime, MinLifetime and MaxLifetime bound the exchanged token's life (the `lifetime` parameter,
	// seconds): a run's token should outlive the run, not the week.
	DefaultLifetime = time.Hour
	MinLifetime     = 5 * time.Second
	MaxLifetime     = 12 * time.Hour
	// MaxNamespaces bounds the namespaces one token may produce in (the job's and its outputs').
	MaxNamespaces = 16
	// maxFormBytes bounds the request body.
	maxFormBytes = 64 << 10
	// Operation is the audit records' operation.
	Operation = "exchangeToken"
)

// Authenticator verifies the subject token (authn.Authenticator).
type Authenticator interface {
	AuthenticateToken(ctx context.Context, raw string) (authn.Identity, error)
}

// Minter stores the exchanged token (apitoken.Store).
type Minter interface {
	Create(ctx context.Context, req apitoken.NewToken) (string, authn.TokenInfo, error)
}

// Producer answers PRODUCE for a principal (grantpolicy.GrantPolicy).
type Producer interface {
	CanProduce(ctx context.Context, p authz.Principal, jobNamespace string, outputNamespaces []string) (bool, string)
}

// Handler serves POST Path.
type Handler struct {
	auth      Authenticator
	mint      Minter
	perms     Producer
	canonical func(string) (string, error)
	audit     audit.Auditor
	clock     func() time.Time
}

// New builds the handler; canonical canonicalises namespaces as events' are (normalize.CanonicalNamespace).
func New(auth Authenticator, mint Minter, perms Producer, canonical func(string) (string, error), aud audit.Auditor, clock func() time.Time) *Handler {
	return &Handler{auth: auth, mint: mint, perms: perms, canonical: canonical, audit: aud, clock: clock}
}

// Register mounts the endpoint. It is open in the authentication middleware: the credential is the request's
// subject_token.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+Path, h) }

// Open is the authentication middleware's predicate for the endpoint.
func Open(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == Path }

// oauthError is RFC 6749 §5.2's error answer.
type oauthError struct {
	status      int
	code, descr string
}

func (e *oauthError) Error() string { return e.code + ": " + e.descr }

func invalid(code, format string, args ...any) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: code, descr: fmt.Sprintf(format, args...)}
}

// request is a parsed exchange request.
type request struct {
	subjectToken string
	namespaces   []string
	lifetime     time.Duration
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	req, err := h.parse(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	ans, err := h.exchange(r.Context(), req)
	if err != nil {
		writeErr(w, err)
		return
	}
	_ = json.NewEncoder(w).Encode(ans)
}

func (h *Handler) parse(w http.ResponseWriter, r *http.Request) (request, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return request{}, invalid("invalid_request", "the body must be application/x-www-form-urlencoded of at most %d bytes", maxFormBytes)
	}
	f := r.PostForm
	if g := f.Get("grant_type"); g != GrantType {
		return request{}, invalid("unsupported_grant_type", "grant_type: %q, want %s", g, GrantType)
	}
	req := request{subjectToken: f.Get("subject_token"), lifetime: DefaultLifetime}
	switch {
	case req.subjectToken == "":
		return request{}, invalid("invalid_request", "subject_token: required (the service's API token)")
	case f.Get("subject_token_type") != TokenTypeAccess:
		return request{}, invalid("invalid_request", "subject_token_type: %q, want %s", f.Get("subject_token_type"), TokenTypeAccess)
	case f.Get("requested_token_type") != "" && f.Get("requested_token_type") != TokenTypeAccess:
		return request{}, invalid("invalid_request", "requested_token_type: %q, only %s is issued", f.Get("requested_token_type"), TokenTypeAccess)
	case !authn.IsAPIToken(req.subjectToken):
		return request{}, invalid("invalid_request", "subject_token: must be a Headwater API token (hw_...)")
	}
	if s := f.Get("lifetime"); s != "" {
		n, err := strconv.Atoi(s)
		d := time.Duration(n) * time.Second
		if err != nil || d < MinLifetime || d > MaxLifetime {
			return request{}, invalid("invalid_request", "lifetime: %q must be whole seconds from %d to %d", s, int(MinLifetime.Seconds()), int(MaxLifetime.Seconds()))
		}
		req.lifetime = d
	}
	entries := strings.Fields(f.Get("scope"))
	if len(entries) == 0 || len(entries) > MaxNamespaces {
		return request{}, invalid("invalid_scope", "scope: %d entries; name 1 to %d as %s<namespace>, space-separated", len(entries), MaxNamespaces, ScopePrefix)
	}
	for _, e := range entries {
		raw, ok := strings.CutPrefix(e, ScopePrefix)
		if !ok || raw == "" {
			return request{}, invalid("invalid_scope", "scope: %q must be %s<namespace>", e, ScopePrefix)
		}
		ns, err := h.canonical(raw)
		if err != nil {
			return request{}, invalid("invalid_scope", "scope: %q: %v", e, err)
		}
		if !slices.Contains(req.namespaces, ns) {
			req.namespaces = append(req.namespaces, ns)
		}
	}
	slices.Sort(req.namespaces)
	return req, nil
}

// answer is RFC 8693 §2.2.1's.
type answer struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int    `json:"expires_in"`
	Scope           string `json:"scope"`
}

func (h *Handler) exchange(ctx context.Context, req request) (answer, error) {
	id, err := h.auth.AuthenticateToken(ctx, req.subjectToken)
	if err != nil {
		if errors.Is(err, authn.ErrUnavailable) {
			return answer{}, &oauthError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", descr: "authentication is temporarily unavailable"}
		}
		return answer{}, invalid("invalid_grant", "subject_token: invalid, revoked or expired")
	}
	p := id.Principal
	refuse := func(e *oauthError) (answer, error) {
		if err := h.record(ctx, p, audit.DecisionDeny, e.descr); err != nil {
			return answer{}, err
		}
		return answer{}, e
	}
	switch {
	case p.Restricted():
		return refuse(invalid("invalid_grant", "subject_token: an exchanged token cannot be exchanged again"))
	case p.Kind != authn.KindService && p.Kind != authn.KindProducer:
		return refuse(invalid("invalid_grant", "subject_token: a %s token; only service and producer credentials are exchanged", p.Kind))
	}
	for _, ns := range req.namespaces {
		if ok, _ := h.perms.CanProduce(ctx, p, ns, nil); !ok {
			return refuse(invalid("invalid_scope", "scope: %s%s: %s holds no PRODUCE on %s", ScopePrefix, ns, p.Subject, ns))
		}
	}
	scope := ScopePrefix + strings.Join(req.namespaces, " "+ScopePrefix)
	expires := h.clock().Add(req.lifetime)
	if err := h.record(ctx, p, audit.DecisionAllow, fmt.Sprintf("token %s exchanged for %s until %s", id.TokenID, scope,
		expires.UTC().Format(time.RFC3339))); err != nil {
		return answer{}, err
	}
	tok, _, err := h.mint.Create(ctx, apitoken.NewToken{Owner: p.Subject, Kind: authn.KindProducer, ExpiresAt: expires,
		CreatedBy: "token-exchange:" + id.TokenID, Description: "exchanged for " + scope, Namespaces: req.namespaces})
	if err != nil {
		return answer{}, &oauthError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", descr: "the token could not be stored"}
	}
	return answer{AccessToken: tok, IssuedTokenType: TokenTypeAccess, TokenType: "Bearer", ExpiresIn: int(req.lifetime.Seconds()), Scope: scope}, nil
}

// record audits one exchange decision; an exchange that cannot be audited is not granted (503).
func (h *Handler) record(ctx context.Context, p authz.Principal, d audit.Decision, reason string) error {
	if err := h.audit.Audit(ctx, audit.AuditRecord{Time: h.clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind,
		Operation: Operation, Decision: d, Reason: reason}); err != nil {
		return &oauthError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", descr: "the exchange could not be audited"}
	}
	return nil
}

func writeErr(w http.ResponseWriter, err error) {
	var e *oauthError
	if !errors.As(err, &e) {
		e = &oauthError{status: http.StatusInternalServerError, code: "server_error", descr: "internal error"}
	}
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": e.code, "error_description": e.descr})
}
