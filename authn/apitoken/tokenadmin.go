package apitoken

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
)

// ErrForbidden means the caller may not manage that token.
var ErrForbidden = errors.New("forbidden")

// ManageChecker answers whether a principal holds a privilege on a securable (grantpolicy.GrantPolicy).
type ManageChecker interface {
	CanOn(ctx context.Context, p authz.Principal, priv authz.Privilege, s grant.Securable) bool
}

// Manager is the API-token service behind the management API. A principal may create and revoke user
// tokens for itself; tokens for anyone else, and service or producer tokens, need MANAGE_GRANTS on ROOT.
// Every creation and revocation, and every refusal, is audited.
type Manager struct {
	store *Store
	authz ManageChecker
	audit audit.Auditor
	clock func() time.Time
}

// NewManager returns the token service.
func NewManager(store *Store, checker ManageChecker, audit audit.Auditor, clock func() time.Time) *Manager {
	return &Manager{store: store, authz: checker, audit: audit, clock: clock}
}

// Create creates a token and returns it in full (shown once).
func (m *Manager) Create(ctx context.Context, caller authz.Principal, req NewToken) (string, authn.TokenInfo, error) {
	req.CreatedBy = caller.Subject
	self := req.Owner == caller.Subject && req.Kind == authn.KindUser
	if err := m.check(ctx, caller, "createToken", self, req.Owner); err != nil {
		return "", authn.TokenInfo{}, err
	}
	tok, info, err := m.store.Create(ctx, req)
	if err != nil {
		return "", authn.TokenInfo{}, err
	}
	return tok, info, m.record(ctx, caller, "createToken", audit.DecisionAllow, "token "+info.ID+" for "+info.Owner)
}

// Revoke revokes a token.
func (m *Manager) Revoke(ctx context.Context, caller authz.Principal, id string) error {
	info, err := m.store.Get(ctx, id)
	if err != nil {
		return err
	}
	self := info.Owner == caller.Subject
	if err := m.check(ctx, caller, "revokeToken", self, info.Owner); err != nil {
		return err
	}
	if err := m.store.Revoke(ctx, id, caller.Subject); err != nil {
		return err
	}
	return m.record(ctx, caller, "revokeToken", audit.DecisionAllow, "token "+id+" of "+info.Owner)
}

func (m *Manager) check(ctx context.Context, caller authz.Principal, op string, self bool, owner string) error {
	self = self && !caller.Restricted() // an exchanged token never mints tokens, not even its owner's own
	if self || m.authz.CanOn(ctx, caller, authz.PrivManageGrants, grant.Root()) {
		return nil
	}
	reason := "MANAGE_GRANTS on ROOT needed to manage tokens of " + owner
	return errors.Join(fmt.Errorf("%w: %s", ErrForbidden, reason),
		m.record(ctx, caller, op, audit.DecisionDeny, reason))
}

func (m *Manager) record(ctx context.Context, p authz.Principal, op string, d audit.Decision, reason string) error {
	return m.audit.Audit(ctx, audit.AuditRecord{Time: m.clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind,
		Operation: op, Decision: d, Reason: reason})
}
