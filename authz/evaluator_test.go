package authz

import (
	"context"
	"fmt"
	"testing"
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

func ds(ns, name string) Candidate {
	return Candidate{Kind: KindDataset, Key: "k:" + ns + name, Namespace: ns, Name: name}
}
func job(ns, name string) Candidate {
	return Candidate{Kind: KindJob, Key: "j:" + ns + name, Namespace: ns, Name: name}
}
func prefix(ns, name string) Securable {
	return Securable{Kind: SecPrefix, Namespace: ns, Name: name}
}

func evalWith(grants ...Grant) (*Evaluator, Principal) {
	snap := Snapshot{Epoch: 7, Roles: []Role{{Name: "r"}}, Bindings: []RoleBinding{{Subject: "alice", Role: "r"}}}
	for _, g := range grants {
		g.Role = "r"
		snap.Grants = append(snap.Grants, g)
	}
	return NewEvaluator(snap, Settings{}, envOfTest), Principal{Subject: "alice", Kind: "user"}
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
			if got := PrefixCovers(c.prefix, c.name); got != c.want {
				t.Errorf("PrefixCovers = %v, want %v", got, c.want)
			}
			ev, p := evalWith(Grant{Privilege: PrivDescribe, On: prefix(wh, c.prefix)})
			if got := ev.Can(p, nil, PrivDescribe, ds(wh, c.name)); got != c.want {
				t.Errorf("evaluator = %v, want %v (must agree with PrefixCovers)", got, c.want)
			}
		})
	}
}

func TestInheritanceAndKinds(t *testing.T) {
	cases := []struct {
		name  string
		grant Grant
		cand  Candidate
		priv  Privilege
		want  bool
	}{
		{"root covers any dataset", Grant{Privilege: PrivDescribe, On: Root()}, ds("s3://new-bucket", "created/later"), PrivDescribe, true},
		{"environment covers its namespaces", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecEnvironment, Environment: "prod"}}, ds(wh, "a.b"), PrivDescribe, true},
		{"environment covers jobs in it", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecEnvironment, Environment: "prod"}}, job(air, "dag.task"), PrivDescribe, true},
		{"environment not others", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecEnvironment, Environment: "prod"}}, ds(crm, "a.b"), PrivDescribe, false},
		{"namespace covers later datasets", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecNamespace, Namespace: wh}}, ds(wh, "brand.new.table"), PrivDescribe, true},
		{"namespace not a sibling", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecNamespace, Namespace: wh}}, ds(crm, "a"), PrivDescribe, false},
		{"prefix covers jobs too", Grant{Privilege: PrivDescribe, On: prefix(air, "finance")}, job(air, "finance.daily"), PrivDescribe, true},
		{"dataset grant exact", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecDataset, Namespace: wh, Name: "a.b"}}, ds(wh, "a.b"), PrivDescribe, true},
		{"dataset grant not below", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecDataset, Namespace: wh, Name: "a.b"}}, ds(wh, "a.b.c"), PrivDescribe, false},
		{"dataset grant not a job", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecDataset, Namespace: wh, Name: "a.b"}}, job(wh, "a.b"), PrivDescribe, false},
		{"job grant not a dataset", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecJob, Namespace: air, Name: "j"}}, ds(air, "j"), PrivDescribe, false},
		{"field follows dataset", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecDataset, Namespace: wh, Name: "a.b"}}, Candidate{Kind: KindField, Key: "f", Namespace: wh, Name: "a.b"}, PrivDescribe, true},
		{"nothing granted", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecNamespace, Namespace: crm}}, ds(wh, "x"), PrivDescribe, false},
		{"nameless candidate needs root", Grant{Privilege: PrivDescribe, On: Securable{Kind: SecNamespace, Namespace: wh}}, Candidate{Kind: KindJob, Key: "job_x"}, PrivDescribe, false},
		{"nameless candidate with root", Grant{Privilege: PrivDescribe, On: Root()}, Candidate{Kind: KindJob, Key: "job_x"}, PrivDescribe, true},
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
	all := Privileges()
	implied := map[Privilege][]Privilege{
		PrivList:          {PrivList},
		PrivDescribe:      {PrivDescribe, PrivList},
		PrivViewLineage:   {PrivViewLineage, PrivDescribe, PrivList},
		PrivViewSQL:       {PrivViewSQL, PrivDescribe, PrivList},
		PrivViewSensitive: {PrivViewSensitive, PrivDescribe, PrivList},
		PrivProduce:       {PrivProduce},
		PrivManageGrants:  all,
	}
	for granted, want := range implied {
		ev, p := evalWith(Grant{Privilege: granted, On: Securable{Kind: SecNamespace, Namespace: wh}})
		for _, q := range all {
			exp := contains(want, q)
			if got := ev.Can(p, nil, q, ds(wh, "t")); got != exp {
				t.Errorf("grant %s: Can %s = %v, want %v", granted, q, got, exp)
			}
		}
	}
}

func contains(ps []Privilege, p Privilege) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func TestDenyWins(t *testing.T) {
	ev, p := evalWith(
		Grant{Privilege: PrivManageGrants, On: Securable{Kind: SecNamespace, Namespace: wh}},
		Grant{Privilege: PrivDescribe, Effect: Deny, On: prefix(wh, "analytics.hr")},
		Grant{Privilege: PrivViewLineage, On: Securable{Kind: SecDataset, Namespace: wh, Name: "analytics.hr.salaries"}},
		Grant{Privilege: PrivViewSQL, Effect: Deny, On: prefix(wh, "analytics.ops")},
	)
	cases := []struct {
		cand Candidate
		priv Privilege
		want bool
	}{
		{ds(wh, "analytics.finance.orders"), PrivViewLineage, true},
		{ds(wh, "analytics.hr.salaries"), PrivDescribe, false},    // deny on the prefix beats the dataset allow
		{ds(wh, "analytics.hr.salaries"), PrivViewLineage, false}, // lineage implies describe: denied with it
		{ds(wh, "analytics.hr.salaries"), PrivManageGrants, false},
		{ds(wh, "analytics.hr.salaries"), PrivList, true},   // deny of DESCRIBE leaves LIST
		{ds(wh, "analytics.hr_public"), PrivDescribe, true}, // whole segments: not under analytics.hr
		{ds(wh, "analytics.ops.x"), PrivViewSQL, false},
		{ds(wh, "analytics.ops.x"), PrivViewLineage, true}, // deny of VIEW_SQL takes nothing else
		{ds(wh, "analytics.ops.x"), PrivManageGrants, false},
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
		grants []Grant
		want   bool
	}{
		{"describe on root", []Grant{{Privilege: PrivDescribe, On: Root()}}, true},
		{"lineage on root implies describe", []Grant{{Privilege: PrivViewLineage, On: Root()}}, true},
		{"list on root is not describe", []Grant{{Privilege: PrivList, On: Root()}}, false},
		{"environment is not everything", []Grant{{Privilege: PrivDescribe, On: Securable{Kind: SecEnvironment, Environment: "prod"}}}, false},
		{"root with a describe deny", []Grant{{Privilege: PrivDescribe, On: Root()}, {Privilege: PrivDescribe, Effect: Deny, On: prefix(wh, "x")}}, false},
		{"root with an sql deny stays global", []Grant{{Privilege: PrivDescribe, On: Root()}, {Privilege: PrivViewSQL, Effect: Deny, On: prefix(wh, "x")}}, true},
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
	snap := Snapshot{Epoch: 3,
		Roles: []Role{{Name: "fin"}, {Name: "hr"}, {Name: "fin-copy"}},
		Grants: []Grant{
			{Role: "fin", Privilege: PrivDescribe, On: prefix(wh, "analytics.finance")},
			{Role: "fin-copy", Privilege: PrivDescribe, On: prefix(wh, "analytics.finance")},
			{Role: "hr", Privilege: PrivDescribe, On: prefix(wh, "analytics.hr")},
		},
		Bindings: []RoleBinding{{Subject: "alice", Role: "fin"}, {Subject: "bob", Role: "fin"}, {Subject: "carol", Role: "hr"},
			{Subject: "dave", Role: "fin-copy"}},
	}
	ev := NewEvaluator(snap, Settings{}, envOfTest)
	fp := func(e *Evaluator, s string, claimed ...string) string {
		return e.Scope(Principal{Subject: s}, claimed).Fingerprint
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
	if fp(NewEvaluator(snap2, Settings{}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("the epoch is part of the fingerprint")
	}
	if fp(NewEvaluator(snap, Settings{HiddenNeighbours: HiddenRedact}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("the hidden-neighbour mode is part of the fingerprint")
	}
	snap3 := snap
	snap3.Grants = append(append([]Grant(nil), snap.Grants...), Grant{Role: "fin", Privilege: PrivViewSQL, On: prefix(wh, "analytics.finance")})
	if fp(NewEvaluator(snap3, Settings{}, envOfTest), "alice") == fp(ev, "alice") {
		t.Error("a grant change changes the fingerprint")
	}
}

func TestValidation(t *testing.T) {
	bad := []Grant{
		{Role: "r", Privilege: "READ", On: Root()},
		{Role: "r", Privilege: PrivDescribe, Effect: "MAYBE", On: Root()},
		{Role: "r", Privilege: PrivDescribe, On: Securable{Kind: SecPrefix, Namespace: wh}},
		{Role: "r", Privilege: PrivDescribe, On: Securable{Kind: SecPrefix, Namespace: wh, Name: "..."}},
		{Role: "r", Privilege: PrivDescribe, On: Securable{Kind: SecRoot, Namespace: wh}},
		{Role: "r", Privilege: PrivProduce, On: prefix(wh, "a")},
		{Role: "", Privilege: PrivDescribe, On: Root()},
	}
	for i, g := range bad {
		if err := g.Validate(); err == nil {
			t.Errorf("grant %d %+v: want an error", i, g)
		}
	}
	if err := (Grant{Role: "r", Privilege: PrivProduce, On: Securable{Kind: SecNamespace, Namespace: wh}}).Validate(); err != nil {
		t.Errorf("produce on a namespace: %v", err)
	}
}

func BenchmarkHopCheck5000x200(b *testing.B) {
	snap := Snapshot{Epoch: 1, Roles: []Role{{Name: "r"}}, Bindings: []RoleBinding{{Subject: "alice", Role: "r"}}}
	for i := range 200 {
		on := prefix(fmt.Sprintf("postgres://db%d:5432", i%20), fmt.Sprintf("schema%d.sub%d", i%10, i))
		eff := Allow
		if i%25 == 0 {
			eff = Deny
		}
		snap.Grants = append(snap.Grants, Grant{Role: "r", Privilege: PrivDescribe, Effect: eff, On: on})
	}
	ev := NewEvaluator(snap, Settings{}, envOfTest)
	g := &GrantPolicy{opts: PolicyOptions{}}
	g.cur.Store(ev)
	cands := make([]Candidate, 5000)
	for i := range cands {
		cands[i] = ds(fmt.Sprintf("postgres://db%d:5432", i%25), fmt.Sprintf("schema%d.sub%d.table%d", i%10, i%300, i))
	}
	p := Principal{Subject: "alice"}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := describe(ctx, g, p, cands); err != nil {
			b.Fatal(err)
		}
	}
}

// describe asks pol in one Check batch whether p may DESCRIBE each candidate (what a hop asks of the nodes it
// reaches).
func describe(ctx context.Context, pol Policy, p Principal, cands []Candidate) ([]bool, error) {
	checks := make([]Check, len(cands))
	for i, c := range cands {
		checks[i] = Check{Priv: PrivDescribe, Candidate: c}
	}
	return pol.Check(ctx, p, checks)
}
