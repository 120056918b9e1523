package grantstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/authz/policyfile"
	"github.com/headwater-data/headwater/internal/testenv"
)

// memAuditor keeps records in memory for tests that check what was audited.
type memAuditor struct{ recs []audit.AuditRecord }

func (m *memAuditor) Audit(_ context.Context, r audit.AuditRecord) error {
	m.recs = append(m.recs, r)
	return nil
}

// fixture is one test's grant store, policy and manager, with unique role and subject names.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	store   *GrantStore
	policy  *grantpolicy.GrantPolicy
	mgr     *manage.Manager
	audit   *memAuditor
	ns      string // unique namespace of this test
	prefix  string // unique prefix of role names and subjects
	admin   authz.Principal
	created []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{t: t, ctx: ctx, store: NewGrantStore(testenv.Store(t), time.Now), audit: &memAuditor{}}
	f.prefix = testenv.Namespace(t)
	f.ns = "postgres://" + f.prefix + ":5432"
	pol, err := grantpolicy.NewGrantPolicy(ctx, f.store, grantpolicy.PolicyOptions{EnvironmentOf: envOfTest})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = pol
	f.mgr = manage.NewManager(f.store, pol, f.audit, nil, time.Now)
	f.admin = authz.Principal{Subject: f.prefix + "-admin", Kind: "user"}
	// Bootstrap: the admin role is created directly in the store (as the policy file would), then used.
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("admin")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("admin"), Privilege: authz.PrivManageGrants, On: f.nsSec()}},
		grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: f.admin.Subject, Role: f.role("admin")}})
	t.Cleanup(f.cleanup)
	return f
}

func (f *fixture) role(n string) string { return f.prefix + "-" + n }
func (f *fixture) nsSec() grant.Securable {
	return grant.Securable{Kind: grant.SecNamespace, Namespace: f.ns}
}

func (f *fixture) apply(cs ...grant.Change) grant.ApplyResult {
	f.t.Helper()
	for _, c := range cs {
		if c.Op == grant.OpCreateRole {
			f.created = append(f.created, c.Role.Name)
		}
	}
	res, err := f.store.Apply(f.ctx, "test", cs)
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	return res
}

func (f *fixture) cleanup() {
	var cs []grant.Change
	for _, r := range f.created {
		cs = append(cs, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: r}})
	}
	_, _ = f.store.Apply(context.Background(), "test-cleanup", cs)
}

func TestGrantStoreRoundTrip(t *testing.T) {
	f := newFixture(t)
	before, err := f.store.Epoch(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := grant.Grant{Role: f.role("fin"), Privilege: authz.PrivViewLineage, Effect: grant.Deny, On: prefix(f.ns, "analytics.finance"), Source: grant.SourceAPI}
	b := grant.RoleBinding{Subject: f.prefix + "-alice", Role: f.role("fin"), Source: grant.SourceAPI}
	res := f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("fin"), Description: "finance", Source: grant.SourceAPI}},
		grant.Change{Op: grant.OpGrant, Grant: &g}, grant.Change{Op: grant.OpBindRole, Binding: &b})
	if res.Epoch <= before || len(res.Changed) != 3 {
		t.Fatalf("apply: epoch %d (before %d), changed %d, want a bump and 3 changes", res.Epoch, before, len(res.Changed))
	}
	snap, err := f.store.Load(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Epoch < res.Epoch {
		t.Errorf("loaded epoch %d < applied %d", snap.Epoch, res.Epoch)
	}
	if !slices.Contains(snap.Roles, grant.Role{Name: f.role("fin"), Description: "finance", Source: grant.SourceAPI}) {
		t.Error("role not loaded back")
	}
	if !slices.Contains(snap.Grants, g) {
		t.Errorf("grant not loaded back as written: %+v", g)
	}
	if !slices.Contains(snap.Bindings, b) {
		t.Error("binding not loaded back")
	}
	again := f.apply(grant.Change{Op: grant.OpGrant, Grant: &g})
	if len(again.Changed) != 0 {
		t.Errorf("re-granting changed %d things, want 0 (idempotent)", len(again.Changed))
	}
	_, err = f.store.Apply(f.ctx, "test", []grant.Change{{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("missing"), Privilege: authz.PrivDescribe, On: grant.Root()}}})
	if !errors.Is(err, grant.ErrUnknownRole) {
		t.Errorf("grant to a missing role: %v, want ErrUnknownRole", err)
	}
	del := f.apply(grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: f.role("fin")}})
	snap, _ = f.store.Load(f.ctx)
	if del.Epoch <= res.Epoch || slices.Contains(snap.Grants, g) || slices.Contains(snap.Bindings, b) {
		t.Error("deleting a role must bump the epoch and remove its grants and bindings")
	}
}

func TestManagerChecksAuditsAndTakesEffect(t *testing.T) {
	f := newFixture(t)
	alice := authz.Principal{Subject: f.prefix + "-alice", Kind: "user"}
	orders := ds(f.ns, "analytics.finance.orders")

	// Only a ROOT manager may create roles: the namespace admin is refused, and the refusal is audited.
	err := f.mgr.CreateRole(f.ctx, f.admin, grant.Role{Name: f.role("fin")})
	if !errors.Is(err, authz.ErrForbidden) {
		t.Fatalf("namespace admin creating a role: %v, want ErrForbidden", err)
	}
	if n := len(f.audit.recs); n != 1 || f.audit.recs[0].Decision != audit.DecisionDeny {
		t.Fatalf("want one DENY record, got %+v", f.audit.recs)
	}
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("fin")}})

	scope0, err := f.policy.Scope(f.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ := describe(f.ctx, f.policy, alice, []authz.Candidate{orders})
	if allowed[0] {
		t.Fatal("alice sees orders before any grant")
	}
	g := grant.Grant{Role: f.role("fin"), Privilege: authz.PrivDescribe, On: prefix(f.ns, "analytics.finance")}
	if err := f.mgr.Grant(f.ctx, f.admin, g); err != nil {
		t.Fatal(err)
	}
	if err := f.mgr.BindRole(f.ctx, f.admin, grant.RoleBinding{Subject: alice.Subject, Role: f.role("fin")}); err != nil {
		t.Fatal(err)
	}
	scope1, err := f.policy.Scope(f.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ = describe(f.ctx, f.policy, alice, []authz.Candidate{orders, ds(f.ns, "analytics.finance_secret")})
	if !allowed[0] || allowed[1] {
		t.Errorf("after grant: allowed = %v, want [true false]", allowed)
	}
	if scope1.Fingerprint == scope0.Fingerprint || scope1.Global {
		t.Errorf("scope after grant: %+v (before %+v)", scope1, scope0)
	}
	// A grant outside what the admin manages is refused.
	outside := grant.Grant{Role: f.role("fin"), Privilege: authz.PrivDescribe, On: grant.Root()}
	if err := f.mgr.Grant(f.ctx, f.admin, outside); !errors.Is(err, authz.ErrForbidden) {
		t.Errorf("granting ROOT as a namespace admin: %v, want ErrForbidden", err)
	}
	// Binding a role with grants outside the admin's securables is refused.
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("global")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("global"), Privilege: authz.PrivDescribe, On: grant.Root()}})
	if err := f.mgr.BindRole(f.ctx, f.admin, grant.RoleBinding{Subject: f.admin.Subject, Role: f.role("global")}); !errors.Is(err, authz.ErrForbidden) {
		t.Errorf("binding a ROOT role as a namespace admin: %v, want ErrForbidden", err)
	}
	if err := f.mgr.Revoke(f.ctx, f.admin, g); err != nil {
		t.Fatal(err)
	}
	allowed, _ = describe(f.ctx, f.policy, alice, []authz.Candidate{orders})
	if allowed[0] {
		t.Error("revoked grant still in force")
	}
	var ops []string
	for _, r := range f.audit.recs {
		ops = append(ops, r.Operation+":"+string(r.Decision))
		if r.Principal == "" || r.Time.IsZero() {
			t.Errorf("audit record without principal or time: %+v", r)
		}
	}
	want := []string{"createRole:DENY", "grant:ALLOW", "bindRole:ALLOW", "grant:DENY", "bindRole:DENY", "revoke:ALLOW"}
	if !slices.Equal(ops, want) {
		t.Errorf("audited %v, want %v", ops, want)
	}
}

func TestPolicyChangeOnOtherReplicaTakesEffectNextQuery(t *testing.T) {
	f := newFixture(t)
	other, err := grantpolicy.NewGrantPolicy(f.ctx, f.store, grantpolicy.PolicyOptions{EnvironmentOf: envOfTest}) // a second replica
	if err != nil {
		t.Fatal(err)
	}
	bob := authz.Principal{Subject: f.prefix + "-bob"}
	s0, _ := other.Scope(f.ctx, bob)
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("ops")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("ops"), Privilege: authz.PrivViewLineage, On: f.nsSec()}},
		grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: bob.Subject, Role: f.role("ops")}})
	s1, err := other.Scope(f.ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if s0.Fingerprint == s1.Fingerprint {
		t.Error("the other replica's scope did not change on the next query")
	}
	if !other.Can(f.ctx, bob, authz.PrivViewLineage, ds(f.ns, "any.table")) {
		t.Error("the other replica does not apply the new grant")
	}
}

func TestClaimedRolesAndProduce(t *testing.T) {
	f := newFixture(t)
	f.apply(grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: f.role("producer")}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("producer"), Privilege: authz.PrivProduce, On: f.nsSec()}},
		grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: f.role("producer"), Privilege: authz.PrivProduce, On: grant.Securable{Kind: grant.SecNamespace, Namespace: f.prefix + "-jobs"}}})
	if err := f.policy.Refresh(f.ctx); err != nil {
		t.Fatal(err)
	}
	p := authz.Principal{Subject: f.prefix + "-spark", Kind: "producer"}
	if ok, _ := f.policy.CanProduce(f.ctx, p, f.prefix+"-jobs", []string{f.ns}); ok {
		t.Fatal("unbound principal may produce")
	}
	ctx := authz.WithClaimedRoles(f.ctx, p.Subject, []string{f.role("producer")})
	if ok, denied := f.policy.CanProduce(ctx, p, f.prefix+"-jobs", []string{f.ns}); !ok {
		t.Errorf("claimed producer role: denied %q", denied)
	}
	if ok, denied := f.policy.CanProduce(ctx, p, f.prefix+"-jobs", []string{f.ns, "s3://elsewhere"}); ok || denied != "s3://elsewhere" {
		t.Errorf("output outside grants: ok=%v denied=%q, want the foreign namespace denied", ok, denied)
	}
	other := authz.Principal{Subject: f.prefix + "-mallory"}
	if ok, _ := f.policy.CanProduce(ctx, other, f.prefix+"-jobs", nil); ok {
		t.Error("claimed roles of one subject must not apply to another")
	}
}

func TestPolicyFileSyncIdempotent(t *testing.T) {
	f := newFixture(t)
	doc := `version: 1
hiddenNeighbours: REDACT
sensitive:
  namespaces: ["` + f.ns + `"]
  tags: [pii]
roles:
  - name: ` + f.role("analysts") + `
    description: read analytics
    grants:
      - privileges: [VIEW_LINEAGE, VIEW_SQL]
        on: {namespace: "` + f.ns + `", prefix: analytics}
      - privileges: [DESCRIBE]
        effect: DENY
        on: {namespace: "` + f.ns + `", prefix: analytics.hr}
  - name: ` + f.role("ingest") + `
    grants:
      - privileges: [PRODUCE]
        on: {namespace: "` + f.ns + `"}
bindings:
  - role: ` + f.role("analysts") + `
    subjects: [` + f.prefix + `-alice, ` + f.prefix + `-bob]
`
	pf, err := policyfile.ParsePolicyFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	pf.Source = "file:" + f.prefix
	f.created = append(f.created, f.role("analysts"), f.role("ingest"))
	if s := pf.Settings(); s.HiddenNeighbours != authz.HiddenRedact || !s.Sensitive(f.ns, nil) || !s.Sensitive("x", []string{"pii"}) {
		t.Errorf("settings: %+v", s)
	}
	first, err := f.mgr.SyncPolicyFile(f.ctx, pf)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Changed) != 2+4+2 { // 2 roles, 4 grants, 2 bindings
		t.Fatalf("first sync changed %d, want 8", len(first.Changed))
	}
	second, err := f.mgr.SyncPolicyFile(f.ctx, pf)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Changed) != 0 {
		t.Errorf("second sync changed %d, want 0", len(second.Changed))
	}
	alice := authz.Principal{Subject: f.prefix + "-alice"}
	if !f.policy.Can(f.ctx, alice, authz.PrivViewSQL, ds(f.ns, "analytics.sales")) || f.policy.Can(f.ctx, alice, authz.PrivDescribe, ds(f.ns, "analytics.hr.pay")) {
		t.Error("file grants not in force as declared")
	}
	// Dropping bob and the ingest role from the file removes exactly them.
	pf.Bindings[0].Subjects = pf.Bindings[0].Subjects[:1]
	pf.Roles = pf.Roles[:1]
	third, err := f.mgr.SyncPolicyFile(f.ctx, pf)
	if err != nil {
		t.Fatal(err)
	}
	var ops []grant.ChangeOp
	for _, c := range third.Changed {
		ops = append(ops, c.Op)
	}
	if !slices.Equal(ops, []grant.ChangeOp{grant.OpRevoke, grant.OpUnbindRole, grant.OpDeleteRole}) {
		b, _ := json.Marshal(third.Changed)
		t.Errorf("third sync changes: %s, want revoke ingest's grant, unbind bob, delete ingest", b)
	}
	if f.policy.Can(f.ctx, authz.Principal{Subject: f.prefix + "-bob"}, authz.PrivDescribe, ds(f.ns, "analytics.sales")) {
		t.Error("bob still sees after his binding left the file")
	}
	if n := len(f.audit.recs); n != 2 {
		t.Errorf("audit records: %d, want 2 (one per sync that changed something)", n)
	}
}

// envOfTest puts every namespace of these tests in the default environment.
func envOfTest(string) string { return "default" }

func ds(ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindDataset, Key: "k:" + ns + name, Namespace: ns, Name: name}
}

func prefix(ns, name string) grant.Securable {
	return grant.Securable{Kind: grant.SecPrefix, Namespace: ns, Name: name}
}

// describe asks pol in one Check batch whether p may DESCRIBE each candidate.
func describe(ctx context.Context, pol authz.Policy, p authz.Principal, cands []authz.Candidate) ([]bool, error) {
	checks := make([]authz.Check, len(cands))
	for i, c := range cands {
		checks[i] = authz.Check{Priv: authz.PrivDescribe, Candidate: c}
	}
	return pol.Check(ctx, p, checks)
}
