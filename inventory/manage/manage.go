// Package manage is the permission and audit path every registration of the trust signals goes through: the
// expected-job inventories (package registry) and the canaries (package canaries). It checks MANAGE_INVENTORY
// on every namespace a registration names, writes one audit record per decision, and classes and answers the
// refusals both endpoints give (ADR 0034).
//
// Invariants: a namespace the caller may not manage refuses the whole registration (and is audited); errors are
// classed ErrInvalid (the message names the field and the rule) or ErrUnavailable (a store failure).
package manage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
)

// Authorizer answers a privilege on a securable (grantpolicy.GrantPolicy); nil allows everything.
type Authorizer interface {
	CanOn(ctx context.Context, p authz.Principal, priv authz.Privilege, s grant.Securable) bool
}

// Gate checks MANAGE_INVENTORY and audits the decisions of one kind of registration.
type Gate struct {
	authz Authorizer
	audit audit.Auditor
	clock func() time.Time
}

// NewGate returns the gate; a nil authorizer allows everything, a nil auditor audits nothing, a nil clock is
// time.Now.
func NewGate(az Authorizer, aud audit.Auditor, clock func() time.Time) *Gate {
	if clock == nil {
		clock = time.Now
	}
	return &Gate{authz: az, audit: aud, clock: clock}
}

// Now is the gate's clock.
func (g *Gate) Now() time.Time { return g.clock() }

// Allowed refuses (and audits the refusal) unless caller holds MANAGE_INVENTORY on every namespace; what names
// the registration in the audit reason ("source s", "canary c").
func (g *Gate) Allowed(ctx context.Context, caller authz.Principal, op, what string, nss []string) error {
	ns := g.missing(ctx, caller, nss)
	if ns == "" {
		return nil
	}
	reason := fmt.Sprintf("%s: MANAGE_INVENTORY missing on namespace %s", what, ns)
	auditErr := g.Record(ctx, caller, op, audit.DecisionDeny, reason)
	return errors.Join(fmt.Errorf("%w: %s", authz.ErrForbidden, reason), auditErr)
}

// Manages reports whether caller holds MANAGE_INVENTORY on every namespace (lists show only those).
func (g *Gate) Manages(ctx context.Context, caller authz.Principal, nss []string) bool {
	return g.missing(ctx, caller, nss) == ""
}

// missing returns the first namespace the caller may not manage inventories in ("" when none).
func (g *Gate) missing(ctx context.Context, caller authz.Principal, nss []string) string {
	if g.authz == nil {
		return ""
	}
	nss = slices.Clone(nss)
	slices.Sort(nss)
	for _, ns := range slices.Compact(nss) {
		if !g.authz.CanOn(ctx, caller, authz.PrivManageInventory, grant.Securable{Kind: grant.SecNamespace, Namespace: ns}) {
			return ns
		}
	}
	return ""
}

// Record writes one audit record (nothing without an auditor).
func (g *Gate) Record(ctx context.Context, p authz.Principal, op string, d audit.Decision, reason string) error {
	if g.audit == nil {
		return nil
	}
	return g.audit.Audit(ctx, audit.AuditRecord{Time: g.clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind,
		Operation: op, Decision: d, Reason: reason})
}

// ErrInvalid classes a registration that cannot be read; the message names the field and the rule.
var ErrInvalid = errors.New("invalid inventory")

// ErrUnavailable classes a store failure.
var ErrUnavailable = errors.New("the inventory store is unavailable, retry later")

// Invalid classes err as ErrInvalid.
func Invalid(err error) error { return fmt.Errorf("%w: %w", ErrInvalid, err) }

// Unavailable classes err as ErrUnavailable.
func Unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }

// ErrorAnswer is the JSON body of a refusal: the field and the rule.
type ErrorAnswer struct {
	Error string `json:"error"`
}

// Refuse answers err: 403 forbidden, 400 invalid (the field and the rule), 503 unavailable (with Retry-After),
// 500 otherwise (logged, never shown).
func Refuse(w http.ResponseWriter, log *slog.Logger, err error) {
	switch {
	case errors.Is(err, authz.ErrForbidden):
		WriteJSON(w, http.StatusForbidden, ErrorAnswer{Error: "forbidden: the caller may not register this inventory"})
	case errors.Is(err, ErrInvalid):
		WriteJSON(w, http.StatusBadRequest, ErrorAnswer{Error: strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")})
	case errors.Is(err, ErrUnavailable):
		log.Warn("inventory store unavailable", "err", err)
		w.Header().Set("Retry-After", "5")
		WriteJSON(w, http.StatusServiceUnavailable, ErrorAnswer{Error: ErrUnavailable.Error()})
	default:
		log.Error("inventory registration failed", "err", err)
		WriteJSON(w, http.StatusInternalServerError, ErrorAnswer{Error: "internal error"})
	}
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
