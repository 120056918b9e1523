// Package manage is the grant-management service behind the GraphQL mutations and the policy-file sync: every
// change checks the caller's MANAGE_GRANTS, is applied in one transaction (bumping the grant epoch), is made
// current in the policy and is audited; a refused change is audited as a denial. It also decides who may read the
// audit stream.
package manage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
)

// ChangeStore reads and changes the grant state (grantstore.GrantStore).
type ChangeStore interface {
	Load(ctx context.Context) (grant.Snapshot, error)
	Apply(ctx context.Context, actor string, changes []grant.Change) (grant.ApplyResult, error)
}

// Manager is the grant-management service the GraphQL mutations call. Every operation checks the caller's
// MANAGE_GRANTS, applies the change in one transaction (bumping the epoch), makes it current in the policy and
// writes one audit record; a refused operation is audited as a denial.
type Manager struct {
	store  ChangeStore
	policy *grantpolicy.GrantPolicy
	audit  audit.Auditor
	canon  grant.Canonicalizer
	clock  func() time.Time
}

// NewManager returns the management service. canon may be nil (securables are then taken as given).
func NewManager(store ChangeStore, policy *grantpolicy.GrantPolicy, audit audit.Auditor, canon grant.Canonicalizer, clock func() time.Time) *Manager {
	return &Manager{store: store, policy: policy, audit: audit, canon: canon, clock: clock}
}

// CreateRole creates a role; it needs MANAGE_GRANTS on ROOT.
func (m *Manager) CreateRole(ctx context.Context, caller authz.Principal, r grant.Role) error {
	return m.change(ctx, caller, "createRole", rootOnly, grant.Change{Op: grant.OpCreateRole, Role: &r})
}

// DeleteRole deletes a role with its grants and bindings; it needs MANAGE_GRANTS on ROOT.
func (m *Manager) DeleteRole(ctx context.Context, caller authz.Principal, name string) error {
	return m.change(ctx, caller, "deleteRole", rootOnly, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: name}})
}

// Grant adds a grant (ALLOW or DENY) to a role. It needs MANAGE_GRANTS on the grant's securable and on every
// securable the role already holds grants on: a steward changes only roles confined to what it manages, so it
// cannot deny through, or add to, a role that reaches beyond (a root administrators' role).
func (m *Manager) Grant(ctx context.Context, caller authz.Principal, g grant.Grant) error {
	g, err := m.canonicalGrant(g)
	if err != nil {
		return err
	}
	return m.change(ctx, caller, "grant", m.grantSecurables(g), grant.Change{Op: grant.OpGrant, Grant: &g})
}

// Revoke removes a grant; it needs what Grant needs.
func (m *Manager) Revoke(ctx context.Context, caller authz.Principal, g grant.Grant) error {
	g, err := m.canonicalGrant(g)
	if err != nil {
		return err
	}
	return m.change(ctx, caller, "revoke", m.grantSecurables(g), grant.Change{Op: grant.OpRevoke, Grant: &g})
}

// BindRole binds a subject to a role. It needs MANAGE_GRANTS on every securable the role holds grants on (on
// ROOT for a role without grants), so nobody hands out more than they manage.
func (m *Manager) BindRole(ctx context.Context, caller authz.Principal, b grant.RoleBinding) error {
	return m.change(ctx, caller, "bindRole", m.roleSecurables(b.Role), grant.Change{Op: grant.OpBindRole, Binding: &b})
}

// UnbindRole removes a binding; it needs what BindRole needs.
func (m *Manager) UnbindRole(ctx context.Context, caller authz.Principal, b grant.RoleBinding) error {
	return m.change(ctx, caller, "unbindRole", m.roleSecurables(b.Role), grant.Change{Op: grant.OpUnbindRole, Binding: &b})
}

// need is one securable a caller must manage for an operation, and why (for the audit record's reason).
type need struct {
	on  grant.Securable
	why string
}

// securables lists what a caller must manage for an operation, read from the evaluator after a refresh.
type securables func(*grantpolicy.Evaluator) []need

func rootOnly(*grantpolicy.Evaluator) []need { return []need{{on: grant.Root()}} }

// roleSecurables: every securable the role holds grants on, ROOT for a role without grants (binding a subject
// to an empty role hands out whatever the role gains later).
func (m *Manager) roleSecurables(role string) securables {
	return func(ev *grantpolicy.Evaluator) []need {
		out := roleNeeds(ev, role)
		if len(out) == 0 {
			out = []need{{on: grant.Root()}}
		}
		return out
	}
}

// grantSecurables: the grant's securable and every securable its role already holds grants on. A role
// without grants needs only the grant's securable: after the change it is confined to it.
func (m *Manager) grantSecurables(g grant.Grant) securables {
	return func(ev *grantpolicy.Evaluator) []need { return append([]need{{on: g.On}}, roleNeeds(ev, g.Role)...) }
}

// roleNeeds lists the distinct securables the role holds grants on (ALLOW and DENY alike).
func roleNeeds(ev *grantpolicy.Evaluator, role string) []need {
	var out []need
	seen := map[string]bool{}
	for _, g := range ev.Grants(role) {
		if k := g.On.String(); !seen[k] {
			seen[k] = true
			out = append(out, need{on: g.On, why: "role " + role + " holds a grant there"})
		}
	}
	return out
}

func (m *Manager) change(ctx context.Context, caller authz.Principal, op string, needs securables, c grant.Change) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := m.policy.Refresh(ctx); err != nil {
		return err
	}
	for _, n := range needs(m.policy.Evaluator()) {
		if !m.policy.CanOn(ctx, caller, authz.PrivManageGrants, n.on) {
			reason := "MANAGE_GRANTS missing on " + n.on.String()
			if n.why != "" {
				reason += " (" + n.why + ")"
			}
			err := m.audit.Audit(ctx, m.record(caller, op, audit.DecisionDeny, reason, []grant.Change{c}, 0))
			return errors.Join(fmt.Errorf("%w: %s", authz.ErrForbidden, reason), err)
		}
	}
	return m.apply(ctx, caller, op, []grant.Change{c})
}

// apply writes changes, makes them current and audits what changed.
func (m *Manager) apply(ctx context.Context, caller authz.Principal, op string, changes []grant.Change) error {
	res, err := m.store.Apply(ctx, caller.Subject, changes)
	if err != nil {
		return err
	}
	if len(res.Changed) == 0 {
		return nil
	}
	refreshErr := m.policy.Refresh(ctx)
	auditErr := m.audit.Audit(ctx, m.record(caller, op, audit.DecisionAllow, "", res.Changed, res.Epoch))
	return errors.Join(refreshErr, auditErr)
}

func (m *Manager) record(p authz.Principal, op string, d audit.Decision, reason string, changes []grant.Change, epoch int64) audit.AuditRecord {
	return audit.AuditRecord{Time: m.clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind, Operation: op,
		Decision: d, Reason: reason, Changes: changes, Epoch: epoch}
}

// canonicalGrant canonicalises the grant's securable like identities of events.
func (m *Manager) canonicalGrant(g grant.Grant) (grant.Grant, error) {
	g = g.Normalized()
	if err := g.Validate(); err != nil {
		return g, err
	}
	on, err := grant.CanonicalSecurable(m.canon, g.On)
	g.On = on
	return g, err
}
