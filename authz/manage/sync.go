package manage

import (
	"context"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/policyfile"
)

// policyFileActor is the principal file syncs are recorded under.
const policyFileActor = "policy-file"

// SyncPolicyFile makes the grant state match the file: it creates what the file declares and is missing, and
// removes file-sourced roles, grants and bindings the file no longer declares, in one transaction. Applying the
// same file twice changes nothing and does not bump the epoch. The sync is audited as one record.
func (m *Manager) SyncPolicyFile(ctx context.Context, f policyfile.PolicyFile) (grant.ApplyResult, error) {
	want, err := f.State(m.canon)
	if err != nil {
		return grant.ApplyResult{}, err
	}
	have, err := m.store.Load(ctx)
	if err != nil {
		return grant.ApplyResult{}, err
	}
	changes := diffState(have, want, f.SourceTag())
	if len(changes) == 0 {
		return grant.ApplyResult{Epoch: have.Epoch}, nil
	}
	caller := authz.Principal{Subject: policyFileActor, Kind: "system"}
	res, err := m.store.Apply(ctx, caller.Subject, changes)
	if err != nil {
		return res, err
	}
	if len(res.Changed) > 0 {
		if err := m.audit.Audit(ctx, m.record(caller, "syncPolicyFile", audit.DecisionAllow, "", res.Changed, res.Epoch)); err != nil {
			return res, err
		}
	}
	return res, m.policy.Refresh(ctx)
}

// diffState lists the changes that turn have's file-sourced state into want: additions first (roles, then
// grants and bindings), then removals (grants, bindings, then roles).
func diffState(have, want grant.Snapshot, source string) []grant.Change {
	var add, remove []grant.Change
	haveRoles, wantRoles := map[string]bool{}, map[string]bool{}
	for _, r := range have.Roles {
		haveRoles[r.Name] = true
	}
	for _, r := range want.Roles {
		wantRoles[r.Name] = true
		if !haveRoles[r.Name] {
			add = append(add, grant.Change{Op: grant.OpCreateRole, Role: &r})
		}
	}
	haveGrants, wantGrants := map[string]bool{}, map[string]bool{}
	for _, g := range have.Grants {
		haveGrants[g.Normalized().ID()] = true
	}
	for _, g := range want.Grants {
		wantGrants[g.ID()] = true
		if !haveGrants[g.ID()] {
			add = append(add, grant.Change{Op: grant.OpGrant, Grant: &g})
		}
	}
	haveBind, wantBind := map[string]bool{}, map[string]bool{}
	for _, b := range have.Bindings {
		haveBind[b.ID()] = true
	}
	for _, b := range want.Bindings {
		wantBind[b.ID()] = true
		if !haveBind[b.ID()] {
			add = append(add, grant.Change{Op: grant.OpBindRole, Binding: &b})
		}
	}
	for _, g := range have.Grants {
		if g.Source == source && !wantGrants[g.Normalized().ID()] {
			remove = append(remove, grant.Change{Op: grant.OpRevoke, Grant: &g})
		}
	}
	for _, b := range have.Bindings {
		if b.Source == source && !wantBind[b.ID()] {
			remove = append(remove, grant.Change{Op: grant.OpUnbindRole, Binding: &b})
		}
	}
	for _, r := range have.Roles {
		if r.Source == source && !wantRoles[r.Name] {
			remove = append(remove, grant.Change{Op: grant.OpDeleteRole, Role: &r})
		}
	}
	return append(add, remove...)
}
