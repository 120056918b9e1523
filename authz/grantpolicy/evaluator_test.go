package grantpolicy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

const (
	wh  = "postgres://wh:5432"
	crm = "postgres://crm:5432"
	air = "airflow-prod"
)

func envOfTest(ns string) string {
	switch ns {
	case wh, air:
		return "prod"
	case crm:
		return "staging"
	}
	return "default"
}

func ds(ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindDataset, Key: "k:" + ns + name, Namespace: ns, Name: name}
}
func job(ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindJob, Key: "j:" + ns + name, Namespace: ns, Name: name}
}
func prefix(ns, name string) grant.Securable {
	return grant.Securable{Kind: grant.SecPrefix, Namespace: ns, Name: name}
}

func evalWith(grants ...grant.Grant) (*Evaluator, authz.Principal) {
	snap := grant.Snapshot{Epoch: 7, Roles: []grant.Role{{Name: "r"}}, Bindings: []grant.RoleBinding{{Subject: "alice", Role: "r"}}}
	for _, g := range grants {
		g.Role = "r"
		snap.Grants = append(snap.Grants, g)
	}
	return NewEvaluator(snap, authz.Settings{}, envOfTest), authz.Principal{Subject: "alice", Kind: "user"}
}

func TestSegmentMatching(t *testing.T) {
	cases := []struct {
		prefix, name string
		want         bool
	}{
		{"analytics.finance", "analytics.finance.orders", true},
		{"analytics.finance", "analytics.finance", true},
		{"analytics.finance", "analytics.finance_secret", false},
		{"analytics.finance", "analytics.financex.orders", false},
		{"analytics.finance", "analytics", false},
		{"analytics.finance.", "analytics.finance.orders", true},
		{"analytics.finance", "analytics.finance/part=1", true},
		{"analytics.finance", "analytics/finance.orders", false},
		{"raw/events", "raw/events/2026/11", true},
		{"raw/events", "raw/events_old/x", false},
		{"raw", "rawdata/x", false},
	}
	for _, c := range cases {
		t.Run(c.prefix+"~"+c.name, func(t *testing.T) {
			if got := grant.PrefixCovers(c.prefix, c.name); got != c.want {
				t.Errorf("PrefixCovers = %v, want %v", got, c.want)
			}
			ev, p := evalWith(grant.Grant{Privilege: authz.PrivDescribe, On: prefix(wh, c.prefix)})
			if got := ev.Can(p, nil, authz.PrivDescribe, ds(wh, c.name)); got != c.want {
				t.Errorf("evaluator = %v, want %v (must agree with PrefixCovers)", got, c.want)
			}
		})
	}
}

func TestInheritanceAndKinds(t *testing.T) {
	cases := []struct {
		name  string
		grant grant.Grant
		cand  authz.Candidate
		priv  authz.Privilege
		want  bool
	}{
		{"root covers any dataset", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Root()}, ds("s3://new-bucket", "created/later"), authz.PrivDescribe, true},
		{"environment covers its namespaces", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"}}, ds(wh, "a.b"), authz.PrivDescribe, true},
		{"environment covers jobs in it", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"}}, job(air, "dag.task"), authz.PrivDescribe, true},
		{"environment not others", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"}}, ds(crm, "a.b"), authz.PrivDescribe, false},
		{"namespace covers later datasets", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}}, ds(wh, "brand.new.table"), authz.PrivDescribe, true},
		{"namespace not a sibling", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}}, ds(crm, "a"), authz.PrivDescribe, false},
		{"prefix covers jobs too", grant.Grant{Privilege: authz.PrivDescribe, On: prefix(air, "finance")}, job(air, "finance.daily"), authz.PrivDescribe, true},
		{"dataset grant exact", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "a.b"}}, ds(wh, "a.b"), authz.PrivDescribe, true},
		{"dataset grant not below", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "a.b"}}, ds(wh, "a.b.c"), authz.PrivDescribe, false},
		{"dataset grant not a job", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "a.b"}}, job(wh, "a.b"), authz.PrivDescribe, false},
		{"job grant not a dataset", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecJob, Namespace: air, Name: "j"}}, ds(air, "j"), authz.PrivDescribe, false},
		{"field follows dataset", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "a.b"}}, authz.Candidate{Kind: authz.KindField, Key: "f", Namespace: wh, Name: "a.b"}, authz.PrivDescribe, true},
		{"nothing granted", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecNamespace, Namespace: crm}}, ds(wh, "x"), authz.PrivDescribe, false},
		{"nameless candidate needs root", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}}, authz.Candidate{Kind: authz.KindJob, Key: "job_x"}, authz.PrivDescribe, false},
		{"nameless candidate with root", grant.Grant{Privilege: authz.PrivDescribe, On: grant.Root()}, authz.Candidate{Kind: authz.KindJob, Key: "job_x"}, authz.PrivDescribe, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, p := evalWith(c.grant)
			if got := ev.Can(p, nil, c.priv, c.cand); got != c.want {
				t.Errorf("Can(%s, %+v) = %v, want %v", c.priv, c.cand, got, c.want)
			}
		})
	}
}

func TestImplicationTable(t *testing.T) {
	all := authz.Privileges()
	implied := map[authz.Privilege][]authz.Privilege{
		authz.PrivList:          {authz.PrivList},
		authz.PrivDescribe:      {authz.PrivDescribe, authz.PrivList},
		authz.PrivViewLineage:   {authz.PrivViewLineage, authz.PrivDescribe, authz.PrivList},
		authz.PrivViewSQL:       {authz.PrivViewSQL, authz.PrivDescribe, authz.PrivList},
		authz.PrivViewSensitive: {authz.PrivViewSensitive, authz.PrivDescribe, authz.PrivList},
		authz.PrivProduce:       {authz.PrivProduce},
		authz.PrivManageGrants:  all,
	}
	for granted, want := range implied {
		ev, p := evalWith(grant.Grant{Privilege: granted, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}})
		for _, q := range all {
			exp := contains(want, q)
			if got := ev.Can(p, nil, q, ds(wh, "t")); got != exp {
				t.Errorf("grant %s: Can %s = %v, want %v", granted, q, got, exp)
			}
		}
	}
}

func contains(ps []authz.Privilege, p authz.Privilege) bool {
	return slices.Contains(ps, p)
}

func TestDenyWins(t *testing.T) {
	ev, p := evalWith(
		grant.Grant{Privilege: authz.PrivManageGrants, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}},
		grant.Grant{Privilege: authz.PrivDescribe, Effect: grant.Deny, On: prefix(wh, "analytics.hr")},
		grant.Grant{Privilege: authz.PrivViewLineage, On: grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "analytics.hr.salaries"}},
		grant.Grant{Privilege: authz.PrivViewSQL, Effect: grant.Deny, On: prefix(wh, "analytics.ops")},
	)
	cases := []struct {
		cand authz.Candidate
		priv authz.Privilege
		want bool
	}{
		{ds(wh, "analytics.finance.orders"), authz.PrivViewLineage, true},
		{ds(wh, "analytics.hr.salaries"), authz.PrivDescribe, false},    // deny on the prefix beats the dataset allow
		{ds(wh, "analytics.hr.salaries"), authz.PrivViewLineage, false}, // lineage implies describe: denied with it
		{ds(wh, "analytics.hr.salaries"), authz.PrivManageGrants, false},
		{ds(wh, "analytics.hr.salaries"), authz.PrivList, true},   // deny of DESCRIBE leaves LIST
		{ds(wh, "analytics.hr_public"), authz.PrivDescribe, true}, // whole segments: not under analytics.hr
		{ds(wh, "analytics.ops.x"), authz.PrivViewSQL, false},
		{ds(wh, "analytics.ops.x"), authz.PrivViewLineage, true}, // deny of VIEW_SQL takes nothing else
		{ds(wh, "analytics.ops.x"), authz.PrivManageGrants, false},
	}
	for _, c := range cases {
		if got := ev.Can(p, nil, c.priv, c.cand); got != c.want {
			t.Errorf("Can(%s, %s) = %v, want %v", c.priv, c.cand.Name, got, c.want)
		}
	}
	if ev.Scope(p, nil).Global {
		t.Error("a principal with a DESCRIBE deny is not global")
	}
}

func TestGlobalScope(t *testing.T) {
	cases := []struct {
		name   string
		grants []grant.Grant
		want   bool
	}{
		{"describe on root", []grant.Grant{{Privilege: authz.PrivDescribe, On: grant.Root()}}, true},
		{"lineage on root implies describe", []grant.Grant{{Privilege: authz.PrivViewLineage, On: grant.Root()}}, true},
		{"list on root is not describe", []grant.Grant{{Privilege: authz.PrivList, On: grant.Root()}}, false},
		{"environment is not everything", []grant.Grant{{Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"}}}, false},
		{"root with a describe deny", []grant.Grant{{Privilege: authz.PrivDescribe, On: grant.Root()}, {Privilege: authz.PrivDescribe, Effect: grant.Deny, On: prefix(wh, "x")}}, false},
		{"root with an sql deny stays global", []grant.Grant{{Privilege: authz.PrivDescribe, On: grant.Root()}, {Privilege: authz.PrivViewSQL, Effect: grant.Deny, On: prefix(wh, "x")}}, true},
		{"no grants", nil, false},
	}
	for _, c := range cases {
		ev, p := evalWith(c.grants...)
		if got := ev.Scope(p, nil).Global; got != c.want {
			t.Errorf("%s: Global = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	snap := grant.Snapshot{Epoch: 3,
		Roles: []grant.Role{{Name: "fin"}, {Name: "hr"}, {Name: "fin-copy"}},
		Grants: []grant.Grant{
			{Role: "fin", Privilege: authz.PrivDescribe, On: prefix(wh, "analytics.finance")},
			{Role: "fin-copy", Privilege: authz.PrivDescribe, On: prefix(wh, "analytics.finance")},
			{Role: "hr", Privilege: authz.PrivDescribe, On: prefix(wh, "analytics.hr")},
		},
		Bindings: []grant.RoleBinding{{Subject: "alice", Role: "fin"}, {Subject: "bob", Role: "fin"}, {Subject: "carol", Role: "hr"},
			{Subject: "dave", Role: "fin-copy"}},
	}
	ev := NewEvaluator(snap, authz.Settings{}, envOfTest)
	fp := func(e *Evaluator, s string, claimed ...string) string {
		return e.Scope(authz.Principal{Subject: s}, claimed).Fingerprint
	}
	if fp(ev, "alice") != fp(ev, "bob") {
		t.Error("equal role sets must share a fingerprint")
	}
	if fp(ev, "alice") != fp(ev, "dave") {
		t.Error("equal effective grants through different roles must share a fingerprint")
	}
	if fp(ev, "alice") == fp(ev, "carol") {
		t.Error("different scopes must not share a fingerprint")
	}
	if fp(ev, "carol") == fp(ev, "carol", "fin") {
		t.Error("a claimed role changes the scope")
	}
	if fp(ev, "carol", "no-such-role") != fp(ev, "carol") {
		t.Error("claimed roles that do not exist are ignored")
	}
	if fp(ev, "nobody") == fp(ev, "alice") {
		t.Error("no grants differs from some grants")
	}
	snap2 := snap
	snap2.Epoch = 4
	if fp(NewEvaluator(snap2, authz.Settings{}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("the epoch is part of the fingerprint")
	}
	if fp(NewEvaluator(snap, authz.Settings{HiddenNeighbours: authz.HiddenRedact}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("the hidden-neighbour mode is part of the fingerprint")
	}
	snap3 := snap
	snap3.Grants = append(append([]grant.Grant(nil), snap.Grants...), grant.Grant{Role: "fin", Privilege: authz.PrivViewSQL, On: prefix(wh, "analytics.finance")})
	if fp(NewEvaluator(snap3, authz.Settings{}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("a grant change changes the fingerprint")
	}
}

func TestValidation(t *testing.T) {
	bad := []grant.Grant{
		{Role: "r", Privilege: "READ", On: grant.Root()},
		{Role: "r", Privilege: authz.PrivDescribe, Effect: "MAYBE", On: grant.Root()},
		{Role: "r", Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecPrefix, Namespace: wh}},
		{Role: "r", Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecPrefix, Namespace: wh, Name: "..."}},
		{Role: "r", Privilege: authz.PrivDescribe, On: grant.Securable{Kind: grant.SecRoot, Namespace: wh}},
		{Role: "r", Privilege: authz.PrivProduce, On: prefix(wh, "a")},
		{Role: "", Privilege: authz.PrivDescribe, On: grant.Root()},
	}
	for i, g := range bad {
		if err := g.Validate(); err == nil {
			t.Errorf("grant %d %+v: want an error", i, g)
		}
	}
	if err := (grant.Grant{Role: "r", Privilege: authz.PrivProduce, On: grant.Securable{Kind: grant.SecNamespace, Namespace: wh}}).Validate(); err != nil {
		t.Errorf("produce on a namespace: %v", err)
	}
}

func BenchmarkHopCheck5000x200(b *testing.B) {
	snap := grant.Snapshot{Epoch: 1, Roles: []grant.Role{{Name: "r"}}, Bindings: []grant.RoleBinding{{Subject: "alice", Role: "r"}}}
	for i := range 200 {
		on := prefix(fmt.Sprintf("postgres://db%d:5432", i%20), fmt.Sprintf("schema%d.sub%d", i%10, i))
		eff := grant.Allow
		if i%25 == 0 {
			eff = grant.Deny
		}
		snap.Grants = append(snap.Grants, grant.Grant{Role: "r", Privilege: authz.PrivDescribe, Effect: eff, On: on})
	}
	ev := NewEvaluator(snap, authz.Settings{}, envOfTest)
	g := &GrantPolicy{opts: PolicyOptions{}}
	g.cur.Store(ev)
	checks := make([]authz.Check, 5000) // one hop's batch: DESCRIBE on every node it reaches
	for i := range checks {
		checks[i] = authz.Check{Priv: authz.PrivDescribe,
			Candidate: ds(fmt.Sprintf("postgres://db%d:5432", i%25), fmt.Sprintf("schema%d.sub%d.table%d", i%10, i%300, i))}
	}
	p := authz.Principal{Subject: "alice"}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Check(ctx, p, checks); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCoversNamespace: a namespace is covered by a grant on it or above it, not by a prefix inside it, and not
// when anything beneath it denies the privilege (or one that implies it).
func TestCoversNamespace(t *testing.T) {
	nsOf := func(ns string) grant.Securable { return grant.Securable{Kind: grant.SecNamespace, Namespace: ns} }
	allow := func(p authz.Privilege, on grant.Securable) grant.Grant { return grant.Grant{Privilege: p, On: on} }
	deny := func(p authz.Privilege, on grant.Securable) grant.Grant {
		return grant.Grant{Privilege: p, On: on, Effect: grant.Deny}
	}
	cases := []struct {
		name   string
		grants []grant.Grant
		priv   authz.Privilege
		ns     string
		want   bool
	}{
		{"namespace grant", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh))}, authz.PrivDescribe, wh, true},
		{"other namespace", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh))}, authz.PrivDescribe, crm, false},
		{"implied by lineage", []grant.Grant{allow(authz.PrivViewLineage, nsOf(wh))}, authz.PrivDescribe, wh, true},
		{"describe is not lineage", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh))}, authz.PrivViewLineage, wh, false},
		{"root", []grant.Grant{allow(authz.PrivDescribe, grant.Root())}, authz.PrivDescribe, crm, true},
		{"environment", []grant.Grant{allow(authz.PrivDescribe, grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"})},
			authz.PrivDescribe, air, true},
		{"prefix only", []grant.Grant{allow(authz.PrivDescribe, prefix(wh, "analytics"))}, authz.PrivDescribe, wh, false},
		{"denied prefix beneath", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh)), deny(authz.PrivDescribe, prefix(wh, "hr"))},
			authz.PrivDescribe, wh, false},
		{"denied dataset beneath", []grant.Grant{allow(authz.PrivViewLineage, nsOf(wh)),
			deny(authz.PrivViewLineage, grant.Securable{Kind: grant.SecDataset, Namespace: wh, Name: "hr.salaries"})}, authz.PrivViewLineage, wh, false},
		{"deny of an unrelated privilege", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh)), deny(authz.PrivViewSQL, prefix(wh, "hr"))},
			authz.PrivDescribe, wh, true},
		{"denied elsewhere", []grant.Grant{allow(authz.PrivDescribe, nsOf(wh)), deny(authz.PrivDescribe, nsOf(crm))},
			authz.PrivDescribe, wh, true},
		{"denied on the namespace", []grant.Grant{allow(authz.PrivDescribe, grant.Root()), deny(authz.PrivDescribe, nsOf(wh))},
			authz.PrivDescribe, wh, false},
	}
	for _, c := range cases {
		e, p := evalWith(c.grants...)
		if got := e.CoversNamespace(p, nil, c.priv, c.ns); got != c.want {
			t.Errorf("%s: CoversNamespace(%s, %s) = %v, want %v", c.name, c.priv, c.ns, got, c.want)
		}
	}
}
