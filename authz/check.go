package authz

import "context"

// Check is one question of a batch: does the principal hold Priv on Candidate.
type Check struct {
	Priv      Privilege
	Candidate Candidate
}

// Checker answers a batch of checks of mixed privileges in one call: the expander asks one batch per hop
// (VIEW_LINEAGE on the nodes it leaves, DESCRIBE on the nodes and jobs it reaches), never per node.
type Checker interface {
	Check(ctx context.Context, p Principal, checks []Check) ([]bool, error)
}

var (
	_ Checker = (*GrantPolicy)(nil)
	_ Checker = AllowAll{}
)

// Check implements Checker: candidates known only by key are named in one batch (NameResolver), then every
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

// Check implements Checker: everything is allowed.
func (AllowAll) Check(_ context.Context, _ Principal, checks []Check) ([]bool, error) {
	out := make([]bool, len(checks))
	for i := range out {
		out[i] = true
	}
	return out, nil
}

// Settings implements the settings source of AllowAll: OMIT, nothing sensitive.
func (AllowAll) Settings() Settings { return Settings{}.normalized() }
