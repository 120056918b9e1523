package authz

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// memAuditor keeps records in memory for tests that check what was audited.
type memAuditor struct{ recs []AuditRecord }

func (m *memAuditor) Audit(_ context.Context, r AuditRecord) error {
	m.recs = append(m.recs, r)
	return nil
}

// fixture is one test's grant store, policy and manager, with unique role and subject names.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	store   *GrantStore
	policy  *GrantPolicy
	mgr     *Manager
	audit   *memAuditor
	ns      string // unique namespace of this test
	prefix  string // unique prefix of role names and subjects
	admin   Principal
	created []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{t: t, ctx: ctx, store: NewGrantStore(testenv.Store(t), time.Now), audit: &memAuditor{}}
	f.prefix = testenv.Namespace(t)
	f.ns = "postgres://" + f.prefix + ":5432"
	pol, err := NewGrantPolicy(ctx, f.store, PolicyOptions{EnvironmentOf: envOfTest})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = pol
	f.mgr = NewManager(f.store, pol, f.audit, nil, time.Now)
	f.admin = Principal{Subject: f.prefix + "-admin", Kind: "user"}
	// Bootstrap: the admin role is created directly in the store (as the policy file would), then used.
	f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("admin")}},
		Change{Op: OpGrant, Grant: &Grant{Role: f.role("admin"), Privilege: PrivManageGrants, On: f.nsSec()}},
		Change{Op: OpBindRole, Binding: &RoleBinding{Subject: f.admin.Subject, Role: f.role("admin")}})
	t.Cleanup(f.cleanup)
	return f
}

func (f *fixture) role(n string) string { return f.prefix + "-" + n }
func (f *fixture) nsSec() Securable     { return Securable{Kind: SecNamespace, Namespace: f.ns} }

func (f *fixture) apply(cs ...Change) ApplyResult {
	f.t.Helper()
	for _, c := range cs {
		if c.Op == OpCreateRole {
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
	var cs []Change
	for _, r := range f.created {
		cs = append(cs, Change{Op: OpDeleteRole, Role: &Role{Name: r}})
	}
	_, _ = f.store.Apply(context.Background(), "test-cleanup", cs)
}

func TestGrantStoreRoundTrip(t *testing.T) {
	f := newFixture(t)
	before, err := f.store.Epoch(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := Grant{Role: f.role("fin"), Privilege: PrivViewLineage, Effect: Deny, On: prefix(f.ns, "analytics.finance"), Source: SourceAPI}
	b := RoleBinding{Subject: f.prefix + "-alice", Role: f.role("fin"), Source: SourceAPI}
	res := f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("fin"), Description: "finance", Source: SourceAPI}},
		Change{Op: OpGrant, Grant: &g}, Change{Op: OpBindRole, Binding: &b})
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
	if !slices.Contains(snap.Roles, Role{Name: f.role("fin"), Description: "finance", Source: SourceAPI}) {
		t.Error("role not loaded back")
	}
	if !slices.Contains(snap.Grants, g) {
		t.Errorf("grant not loaded back as written: %+v", g)
	}
	if !slices.Contains(snap.Bindings, b) {
		t.Error("binding not loaded back")
	}
	again := f.apply(Change{Op: OpGrant, Grant: &g})
	if len(again.Changed) != 0 {
		t.Errorf("re-granting changed %d things, want 0 (idempotent)", len(again.Changed))
	}
	_, err = f.store.Apply(f.ctx, "test", []Change{{Op: OpGrant, Grant: &Grant{Role: f.role("missing"), Privilege: PrivDescribe, On: Root()}}})
	if !errors.Is(err, ErrUnknownRole) {
		t.Errorf("grant to a missing role: %v, want ErrUnknownRole", err)
	}
	del := f.apply(Change{Op: OpDeleteRole, Role: &Role{Name: f.role("fin")}})
	snap, _ = f.store.Load(f.ctx)
	if del.Epoch <= res.Epoch || slices.Contains(snap.Grants, g) || slices.Contains(snap.Bindings, b) {
		t.Error("deleting a role must bump the epoch and remove its grants and bindings")
	}
}

func TestManagerChecksAuditsAndTakesEffect(t *testing.T) {
	f := newFixture(t)
	alice := Principal{Subject: f.prefix + "-alice", Kind: "user"}
	orders := ds(f.ns, "analytics.finance.orders")

	// Only a ROOT manager may create roles: the namespace admin is refused, and the refusal is audited.
	err := f.mgr.CreateRole(f.ctx, f.admin, Role{Name: f.role("fin")})
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("namespace admin creating a role: %v, want ErrForbidden", err)
	}
	if n := len(f.audit.recs); n != 1 || f.audit.recs[0].Decision != DecisionDeny {
		t.Fatalf("want one DENY record, got %+v", f.audit.recs)
	}
	f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("fin")}})

	scope0, err := f.policy.Scope(f.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ := describe(f.ctx, f.policy, alice, []Candidate{orders})
	if allowed[0] {
		t.Fatal("alice sees orders before any grant")
	}
	g := Grant{Role: f.role("fin"), Privilege: PrivDescribe, On: prefix(f.ns, "analytics.finance")}
	if err := f.mgr.Grant(f.ctx, f.admin, g); err != nil {
		t.Fatal(err)
	}
	if err := f.mgr.BindRole(f.ctx, f.admin, RoleBinding{Subject: alice.Subject, Role: f.role("fin")}); err != nil {
		t.Fatal(err)
	}
	scope1, err := f.policy.Scope(f.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ = describe(f.ctx, f.policy, alice, []Candidate{orders, ds(f.ns, "analytics.finance_secret")})
	if !allowed[0] || allowed[1] {
		t.Errorf("after grant: allowed = %v, want [true false]", allowed)
	}
	if scope1.Fingerprint == scope0.Fingerprint || scope1.Global {
		t.Errorf("scope after grant: %+v (before %+v)", scope1, scope0)
	}
	// A grant outside what the admin manages is refused.
	outside := Grant{Role: f.role("fin"), Privilege: PrivDescribe, On: Root()}
	if err := f.mgr.Grant(f.ctx, f.admin, outside); !errors.Is(err, ErrForbidden) {
		t.Errorf("granting ROOT as a namespace admin: %v, want ErrForbidden", err)
	}
	// Binding a role with grants outside the admin's securables is refused.
	f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("global")}},
		Change{Op: OpGrant, Grant: &Grant{Role: f.role("global"), Privilege: PrivDescribe, On: Root()}})
	if err := f.mgr.BindRole(f.ctx, f.admin, RoleBinding{Subject: f.admin.Subject, Role: f.role("global")}); !errors.Is(err, ErrForbidden) {
		t.Errorf("binding a ROOT role as a namespace admin: %v, want ErrForbidden", err)
	}
	if err := f.mgr.Revoke(f.ctx, f.admin, g); err != nil {
		t.Fatal(err)
	}
	allowed, _ = describe(f.ctx, f.policy, alice, []Candidate{orders})
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
	other, err := NewGrantPolicy(f.ctx, f.store, PolicyOptions{EnvironmentOf: envOfTest}) // a second replica
	if err != nil {
		t.Fatal(err)
	}
	bob := Principal{Subject: f.prefix + "-bob"}
	s0, _ := other.Scope(f.ctx, bob)
	f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("ops")}},
		Change{Op: OpGrant, Grant: &Grant{Role: f.role("ops"), Privilege: PrivViewLineage, On: f.nsSec()}},
		Change{Op: OpBindRole, Binding: &RoleBinding{Subject: bob.Subject, Role: f.role("ops")}})
	s1, err := other.Scope(f.ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if s0.Fingerprint == s1.Fingerprint {
		t.Error("the other replica's scope did not change on the next query")
	}
	if !other.Can(f.ctx, bob, PrivViewLineage, ds(f.ns, "any.table")) {
		t.Error("the other replica does not apply the new grant")
	}
}

func TestClaimedRolesAndProduce(t *testing.T) {
	f := newFixture(t)
	f.apply(Change{Op: OpCreateRole, Role: &Role{Name: f.role("producer")}},
		Change{Op: OpGrant, Grant: &Grant{Role: f.role("producer"), Privilege: PrivProduce, On: f.nsSec()}},
		Change{Op: OpGrant, Grant: &Grant{Role: f.role("producer"), Privilege: PrivProduce, On: Securable{Kind: SecNamespace, Namespace: f.prefix + "-jobs"}}})
	if err := f.policy.Refresh(f.ctx); err != nil {
		t.Fatal(err)
	}
	p := Principal{Subject: f.prefix + "-spark", Kind: "producer"}
	if ok, _ := f.policy.CanProduce(f.ctx, p, f.prefix+"-jobs", []string{f.ns}); ok {
		t.Fatal("unbound principal may produce")
	}
	ctx := WithClaimedRoles(f.ctx, p.Subject, []string{f.role("producer")})
	if ok, denied := f.policy.CanProduce(ctx, p, f.prefix+"-jobs", []string{f.ns}); !ok {
		t.Errorf("claimed producer role: denied %q", denied)
	}
	if ok, denied := f.policy.CanProduce(ctx, p, f.prefix+"-jobs", []string{f.ns, "s3://elsewhere"}); ok || denied != "s3://elsewhere" {
		t.Errorf("output outside grants: ok=%v denied=%q, want the foreign namespace denied", ok, denied)
	}
	other := Principal{Subject: f.prefix + "-mallory"}
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
	pf, err := ParsePolicyFile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	pf.Source = "file:" + f.prefix
	f.created = append(f.created, f.role("analysts"), f.role("ingest"))
	if s := pf.Settings(); s.HiddenNeighbours != HiddenRedact || !s.Sensitive(f.ns, nil) || !s.Sensitive("x", []string{"pii"}) {
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
	alice := Principal{Subject: f.prefix + "-alice"}
	if !f.policy.Can(f.ctx, alice, PrivViewSQL, ds(f.ns, "analytics.sales")) || f.policy.Can(f.ctx, alice, PrivDescribe, ds(f.ns, "analytics.hr.pay")) {
		t.Error("file grants not in force as declared")
	}
	// Dropping bob and the ingest role from the file removes exactly them.
	pf.Bindings[0].Subjects = pf.Bindings[0].Subjects[:1]
	pf.Roles = pf.Roles[:1]
	third, err := f.mgr.SyncPolicyFile(f.ctx, pf)
	if err != nil {
		t.Fatal(err)
	}
	var ops []ChangeOp
	for _, c := range third.Changed {
		ops = append(ops, c.Op)
	}
	if !slices.Equal(ops, []ChangeOp{OpRevoke, OpUnbindRole, OpDeleteRole}) {
		b, _ := json.Marshal(third.Changed)
		t.Errorf("third sync changes: %s, want revoke ingest's grant, unbind bob, delete ingest", b)
	}
	if f.policy.Can(f.ctx, Principal{Subject: f.prefix + "-bob"}, PrivDescribe, ds(f.ns, "analytics.sales")) {
		t.Error("bob still sees after his binding left the file")
	}
	if n := len(f.audit.recs); n != 2 {
		t.Errorf("audit records: %d, want 2 (one per sync that changed something)", n)
	}
}

func TestParsePolicyFileRejects(t *testing.T) {
	bad := map[string]string{
		"version":        "version: 2\n",
		"unknown key":    "version: 1\nrolez: []\n",
		"mode":           "version: 1\nhiddenNeighbours: BLUR\n",
		"privilege":      "version: 1\nroles: [{name: r, grants: [{privileges: [READ], on: {all: true}}]}]\n",
		"two leaves":     "version: 1\nroles: [{name: r, grants: [{privileges: [DESCRIBE], on: {namespace: n, prefix: a, job: b}}]}]\n",
		"all and more":   "version: 1\nroles: [{name: r, grants: [{privileges: [DESCRIBE], on: {all: true, namespace: n}}]}]\n",
		"undeclared":     "version: 1\nbindings: [{role: ghost, subjects: [a]}]\n",
		"produce prefix": "version: 1\nroles: [{name: r, grants: [{privileges: [PRODUCE], on: {namespace: n, prefix: a}}]}]\n",
	}
	for name, doc := range bad {
		if _, err := ParsePolicyFile([]byte(doc)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
