package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Canonicalizer canonicalises identities exactly as events are (normalize.Normalizer satisfies it), so a grant
// on what a user typed matches what producers sent.
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (ns, nm string, err error)
}

// ChangeStore reads and changes the grant state (GrantStore).
type ChangeStore interface {
	GrantSource
	Apply(ctx context.Context, actor string, changes []Change) (ApplyResult, error)
}

var _ ChangeStore = (*GrantStore)(nil)

// Manager is the grant-management service the GraphQL mutations call. Every operation checks the caller's
// MANAGE_GRANTS, applies the change in one transaction (bumping the epoch), makes it current in the policy and
// writes one audit record; a refused operation is audited as a denial.
type Manager struct {
	store  ChangeStore
	policy *GrantPolicy
	audit  Auditor
	canon  Canonicalizer
	clock  func() time.Time
}

// NewManager returns the management service. canon may be nil (securables are then taken as given).
func NewManager(store ChangeStore, policy *GrantPolicy, audit Auditor, canon Canonicalizer, clock func() time.Time) *Manager {
	return &Manager{store: store, policy: policy, audit: audit, canon: canon, clock: clock}
}

// CreateRole creates a role; it needs MANAGE_GRANTS on ROOT.
func (m *Manager) CreateRole(ctx context.Context, caller Principal, r Role) error {
	return m.change(ctx, caller, "createRole", rootOnly, Change{Op: OpCreateRole, Role: &r})
}

// DeleteRole deletes a role with its grants and bindings; it needs MANAGE_GRANTS on ROOT.
func (m *Manager) DeleteRole(ctx context.Context, caller Principal, name string) error {
	return m.change(ctx, caller, "deleteRole", rootOnly, Change{Op: OpDeleteRole, Role: &Role{Name: name}})
}

// Grant adds a grant (ALLOW or DENY) to a role. It needs MANAGE_GRANTS on the grant's securable and on every
// securable the role already holds grants on: a steward changes only roles confined to what it manages, so it
// cannot deny through, or add to, a role that reaches beyond (a root administrators' role).
func (m *Manager) Grant(ctx context.Context, caller Principal, g Grant) error {
	g, err := m.canonicalGrant(g)
	if err != nil {
		return err
	}
	return m.change(ctx, caller, "grant", m.grantSecurables(g), Change{Op: OpGrant, Grant: &g})
}

// Revoke removes a grant; it needs what Grant needs.
func (m *Manager) Revoke(ctx context.Context, caller Principal, g Grant) error {
	g, err := m.canonicalGrant(g)
	if err != nil {
		return err
	}
	return m.change(ctx, caller, "revoke", m.grantSecurables(g), Change{Op: OpRevoke, Grant: &g})
}

// BindRole binds a subject to a role. It needs MANAGE_GRANTS on every securable the role holds grants on (on
// ROOT for a role without grants), so nobody hands out more than they manage.
func (m *Manager) BindRole(ctx context.Context, caller Principal, b RoleBinding) error {
	return m.change(ctx, caller, "bindRole", m.roleSecurables(b.Role), Change{Op: OpBindRole, Binding: &b})
}

// UnbindRole removes a binding; it needs what BindRole needs.
func (m *Manager) UnbindRole(ctx context.Context, caller Principal, b RoleBinding) error {
	return m.change(ctx, caller, "unbindRole", m.roleSecurables(b.Role), Change{Op: OpUnbindRole, Binding: &b})
}

// need is one securable a caller must manage for an operation, and why (for the audit record's reason).
type need struct {
	on  Securable
	why string
}

// securables lists what a caller must manage for an operation, read from the evaluator after a refresh.
type securables func(*Evaluator) []need

func rootOnly(*Evaluator) []need { return []need{{on: Root()}} }

// roleSecurables: every securable the role holds grants on, ROOT for a role without grants (binding a subject
// to an empty role hands out whatever the role gains later).
func (m *Manager) roleSecurables(role string) securables {
	return func(ev *Evaluator) []need {
		out := roleNeeds(ev, role)
		if len(out) == 0 {
			out = []need{{on: Root()}}
		}
		return out
	}
}

// grantSecurables: the grant's securable and every securable its role already holds grants on. A role
// without grants needs only the grant's securable: after the change it is confined to it.
func (m *Manager) grantSecurables(g Grant) securables {
	return func(ev *Evaluator) []need { return append([]need{{on: g.On}}, roleNeeds(ev, g.Role)...) }
}

// roleNeeds lists the distinct securables the role holds grants on (ALLOW and DENY alike).
func roleNeeds(ev *Evaluator, role string) []need {
	var out []need
	seen := map[string]bool{}
	for _, g := range ev.grants[role] {
		if k := g.On.String(); !seen[k] {
			seen[k] = true
			out = append(out, need{on: g.On, why: "role " + role + " holds a grant there"})
		}
	}
	return out
}

func (m *Manager) change(ctx context.Context, caller Principal, op string, needs securables, c Change) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := m.policy.Refresh(ctx); err != nil {
		return err
	}
	for _, n := range needs(m.policy.Evaluator()) {
		if !m.policy.CanOn(ctx, caller, PrivManageGrants, n.on) {
			reason := "MANAGE_GRANTS missing on " + n.on.String()
			if n.why != "" {
				reason += " (" + n.why + ")"
			}
			err := m.audit.Audit(ctx, m.record(caller, op, DecisionDeny, reason, []Change{c}, 0))
			return errors.Join(fmt.Errorf("%w: %s", ErrForbidden, reason), err)
		}
	}
	return m.apply(ctx, caller, op, []Change{c})
}

// apply writes changes, makes them current and audits what changed.
func (m *Manager) apply(ctx context.Context, caller Principal, op string, changes []Change) error {
	res, err := m.store.Apply(ctx, caller.Subject, changes)
	if err != nil {
		return err
	}
	if len(res.Changed) == 0 {
		return nil
	}
	refreshErr := m.policy.Refresh(ctx)
	auditErr := m.audit.Audit(ctx, m.record(caller, op, DecisionAllow, "", res.Changed, res.Epoch))
	return errors.Join(refreshErr, auditErr)
}

func (m *Manager) record(p Principal, op string, d Decision, reason string, changes []Change, epoch int64) AuditRecord {
	return AuditRecord{Time: m.clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind, Operation: op,
		Decision: d, Reason: reason, Changes: changes, Epoch: epoch}
}

// canonicalGrant canonicalises the grant's securable like identities of events.
func (m *Manager) canonicalGrant(g Grant) (Grant, error) {
	g = g.normalized()
	if err := g.Validate(); err != nil {
		return g, err
	}
	on, err := CanonicalSecurable(m.canon, g.On)
	g.On = on
	return g, err
}

// CanonicalSecurable canonicalises a securable's namespace and name: URI-like namespaces ("scheme://...") by
// the dataset rules, other namespaces and JOB names by the job rules. canon nil returns s unchanged.
func CanonicalSecurable(canon Canonicalizer, s Securable) (Securable, error) {
	if canon == nil || s.Namespace == "" {
		return s, nil
	}
	name := s.Name
	if name == "" {
		name = "x" // a namespace alone: canonicalise it with a placeholder name
	}
	var ns, nm string
	var err error
	if s.Kind == SecJob || !strings.Contains(s.Namespace, "://") {
		ns, nm, err = canon.Job(s.Namespace, name)
	} else {
		_, ns, nm, err = canon.Dataset(s.Namespace, name)
	}
	if err != nil {
		return s, fmt.Errorf("%w: securable %s: %w", ErrInvalid, s, err)
	}
	s.Namespace = ns
	if s.Name != "" {
		s.Name = nm
	}
	return s.normalized(), nil
}
