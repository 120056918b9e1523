package grantpolicy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// naiveCan is a reference implementation: scan every grant, test coverage with PrefixCovers, and apply the
// implication table by recursion on privilege names. The compiled evaluator must agree with it everywhere.
func naiveCan(grants []grant.Grant, priv authz.Privilege, c authz.Candidate) bool {
	allowed, denied := false, false
	for _, g := range grants {
		if g.Validate() != nil || !naiveCovers(g.On, c) { // invalid grants (PRODUCE below NAMESPACE) never count
			continue
		}
		if g.Effect == grant.Deny && naiveImplies(priv, g.Privilege) {
			denied = true
		}
		if g.Effect != grant.Deny && naiveImplies(g.Privilege, priv) {
			allowed = true
		}
	}
	return allowed && !denied
}

// naiveImplies reports whether holding p means holding q.
func naiveImplies(p, q authz.Privilege) bool {
	if p == q {
		return true
	}
	return slices.ContainsFunc(authz.Implies(p), func(r authz.Privilege) bool { return naiveImplies(r, q) })
}

func naiveCovers(s grant.Securable, c authz.Candidate) bool {
	isJob := c.Kind == authz.KindJob
	switch s.Kind {
	case grant.SecRoot:
		return true
	case grant.SecEnvironment:
		return envOfTest(c.Namespace) == s.Environment
	case grant.SecNamespace:
		return s.Namespace == c.Namespace
	case grant.SecPrefix:
		return s.Namespace == c.Namespace && grant.PrefixCovers(s.Name, c.Name)
	case grant.SecDataset:
		return !isJob && s.Namespace == c.Namespace && s.Name == c.Name
	case grant.SecJob:
		return isJob && s.Namespace == c.Namespace && s.Name == c.Name
	}
	return false
}

func TestEvaluatorAgreesWithReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	namespaces := []string{wh, crm, air, "s3://lake"}
	segs := []string{"a", "b", "fin", "fin_x", "hr"}
	seps := []string{".", "/"}
	name := func() string {
		n := segs[rng.IntN(len(segs))]
		for range rng.IntN(3) {
			n += seps[rng.IntN(2)] + segs[rng.IntN(len(segs))]
		}
		return n
	}
	privs := authz.Privileges()
	allowed, total := 0, 0
	for round := range 300 {
		var grants []grant.Grant
		for range 1 + rng.IntN(8) {
			ns := namespaces[rng.IntN(len(namespaces))]
			on := []grant.Securable{grant.Root(), {Kind: grant.SecEnvironment, Environment: []string{"prod", "staging"}[rng.IntN(2)]},
				{Kind: grant.SecNamespace, Namespace: ns}, {Kind: grant.SecPrefix, Namespace: ns, Name: name()},
				{Kind: grant.SecDataset, Namespace: ns, Name: name()}, {Kind: grant.SecJob, Namespace: ns, Name: name()}}[rng.IntN(6)]
			eff := grant.Allow
			if rng.IntN(4) == 0 {
				eff = grant.Deny
			}
			grants = append(grants, grant.Grant{Role: "r", Privilege: privs[rng.IntN(len(privs))], Effect: eff, On: on})
		}
		ev, p := evalWith(grants...)
		for range 50 {
			c := authz.Candidate{Kind: []authz.NodeKind{authz.KindDataset, authz.KindField, authz.KindJob}[rng.IntN(3)], Key: "k",
				Namespace: namespaces[rng.IntN(len(namespaces))], Name: name()}
			for _, priv := range privs {
				got, want := ev.Can(p, nil, priv, c), naiveCan(grants, priv, c)
				if got != want {
					t.Fatalf("round %d: Can(%s, %+v) = %v, reference %v; grants %+v", round, priv, c, got, want, grants)
				}
				total++
				if got {
					allowed++
				}
			}
		}
	}
	if allowed < total/20 || allowed > total*19/20 {
		t.Errorf("the generator is lopsided: %d of %d checks allowed", allowed, total)
	}
}
