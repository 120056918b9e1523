package lineage

import (
	"context"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// gate is the query side's one entry to the permission model: batched checks of mixed privileges (one call per
// hop or per lookup), the hidden-neighbour mode, sensitive markings and REDACT placeholder ids.
type gate struct {
	policy   authz.Policy
	redactor *authz.Redactor
}

func newGate(p authz.Policy, r *authz.Redactor) gate {
	return gate{policy: p, redactor: r}
}

// check answers a batch in one policy call.
func (g gate) check(ctx context.Context, p authz.Principal, checks []authz.Check) ([]bool, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	return g.policy.Check(ctx, p, checks)
}

// settings are the policy's settings.
func (g gate) settings() authz.Settings { return g.policy.Settings() }

// redact reports whether hidden neighbours are shown as placeholders. REDACT without a redactor (no key) falls
// back to OMIT, which discloses less.
func (g gate) redact() bool {
	return g.redactor != nil && g.settings().HiddenNeighbours == authz.HiddenRedact
}

// batch collects the checks of one policy call under ids; an id passes when all its checks pass.
type batch struct {
	checks []authz.Check
	index  map[string][]int
	result []bool
}

func newBatch() *batch { return &batch{index: map[string][]int{}} }

func (b *batch) add(id string, priv authz.Privilege, cands ...authz.Candidate) {
	if _, seen := b.index[id]; seen {
		return
	}
	b.index[id] = nil
	for _, c := range cands {
		b.index[id] = append(b.index[id], len(b.checks))
		b.checks = append(b.checks, authz.Check{Priv: priv, Candidate: c})
	}
}

func (b *batch) run(ctx context.Context, g gate, p authz.Principal) error {
	res, err := g.check(ctx, p, b.checks)
	b.result = res
	return err
}

// ok reports whether every check of id passed; an unknown id or an id without checks fails (fail closed).
func (b *batch) ok(id string) bool {
	idx := b.index[id]
	if len(idx) == 0 {
		return false
	}
	for _, i := range idx {
		if i >= len(b.result) || !b.result[i] {
			return false
		}
	}
	return true
}

// nodeNames are a node's identities: now and at the query's asOf (for a field, its dataset's).
type nodeNames struct {
	cur, at graph.NameRef
}

// candidates names a node under its current identity and, when it differs, its asOf identity; a node without a
// known name is a key-only candidate the policy names itself (current identity).
func candidates(kind authz.NodeKind, key string, n nodeNames) []authz.Candidate {
	cur := authz.Candidate{Kind: kind, Key: key, Namespace: n.cur.Namespace, Name: n.cur.Name}
	if n.cur.Namespace == "" {
		cur.Namespace, cur.Name = n.at.Namespace, n.at.Name
	}
	out := []authz.Candidate{cur}
	if n.at.Namespace != "" && (n.at.Namespace != cur.Namespace || n.at.Name != cur.Name) {
		out = append(out, authz.Candidate{Kind: kind, Key: key, Namespace: n.at.Namespace, Name: n.at.Name})
	}
	return out
}

func authzKind(k HopKind) authz.NodeKind {
	switch k {
	case HopField:
		return authz.KindField
	case HopJob:
		return authz.KindJob
	}
	return authz.KindDataset
}
