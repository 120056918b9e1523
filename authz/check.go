package authz

import "context"

// Check is one question of a batch: does the principal hold Priv on Candidate.
type Check struct {
	Priv      Privilege
	Candidate Candidate
}

// Check implements Policy: candidates known only by key are named in one batch (NameResolver), then every
// check is an in-memory evaluation against the evaluator in force.
func (g *GrantPolicy) Check(ctx context.Context, p Principal, checks []Check) ([]bool, error) {
	cands := make([]Candidate, len(checks))
	for i, c := range checks {
		cands[i] = c.Candidate
	}
	named, err := g.named(ctx, cands)
	if err != nil {
		return nil, err
	}
	ev, claimed := g.cur.Load(), ClaimedRoles(ctx, p)
	v := ev.viewOf(p, claimed)
	out := make([]bool, len(checks))
	for i, c := range checks {
		out[i] = v.can(c.Priv.bit(), named[i], ev.envOf)
	}
	return out, nil
}
