// Package permcheck is the query side's one entry to the permission model (authz.Policy), shared by the lineage
// walk and the catalog lookups: batched checks of mixed privileges (one policy call per hop or per lookup), the
// hidden-neighbour mode, sensitive markings and REDACT placeholder ids.
//
// Invariant: a batch id passes only when every one of its checks passed; an unknown id, or an id without
// checks, fails (fail closed).
package permcheck

import (
	"context"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// Gate is the query side's one entry to the permission model: batched checks of mixed privileges (one call per
// hop or per lookup), the hidden-neighbour mode, sensitive markings and REDACT placeholder ids.
type Gate struct {
	policy   authz.Policy
	redactor *authz.Redactor
}

// New is the gate of a policy (nil: authz.AllowAll); r makes REDACT placeholder ids (nil: REDACT answers as OMIT).
func New(p authz.Policy, r *authz.Redactor) Gate {
	if p == nil {
		p = authz.AllowAll{}
	}
	return Gate{policy: p, redactor: r}
}

// Policy is the policy the gate asks.
func (g Gate) Policy() authz.Policy { return g.policy }

// Redactor makes REDACT placeholder ids (nil without a key).
func (g Gate) Redactor() *authz.Redactor { return g.redactor }

// check answers a batch in one policy call.
func (g Gate) check(ctx context.Context, p authz.Principal, checks []authz.Check) ([]bool, error) {
	if len(checks) == 0 {
		return nil, nil
	}
	return g.policy.Check(ctx, p, checks)
}

// Settings are the policy's settings.
func (g Gate) Settings() authz.Settings { return g.policy.Settings() }

// Redact reports whether hidden neighbours are shown as placeholders. REDACT without a redactor (no key) falls
// back to OMIT, which discloses less.
func (g Gate) Redact() bool {
	return g.redactor != nil && g.Settings().HiddenNeighbours == authz.HiddenRedact
}

// Batch collects the checks of one policy call under ids; an id passes when all its checks pass.
type Batch struct {
	checks []authz.Check
	index  map[string][]int
	result []bool
}

// NewBatch is an empty batch.
func NewBatch() *Batch { return &Batch{index: map[string][]int{}} }

// Add puts the checks of id in the batch (an id already added keeps its first checks).
func (b *Batch) Add(id string, priv authz.Privilege, cands ...authz.Candidate) {
	if _, seen := b.index[id]; seen {
		return
	}
	b.index[id] = nil
	for _, c := range cands {
		b.index[id] = append(b.index[id], len(b.checks))
		b.checks = append(b.checks, authz.Check{Priv: priv, Candidate: c})
	}
}

// Run asks the gate's policy for the whole batch in one call.
func (b *Batch) Run(ctx context.Context, g Gate, p authz.Principal) error {
	res, err := g.check(ctx, p, b.checks)
	b.result = res
	return err
}

// Has reports whether id was added.
func (b *Batch) Has(id string) bool {
	_, ok := b.index[id]
	return ok
}

// OK reports whether every check of id passed; an unknown id or an id without checks fails (fail closed).
func (b *Batch) OK(id string) bool {
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

// Candidates names a node under its current identity and, when it differs, its asOf identity; a node without a
// known name is a key-only candidate the policy names itself (current identity).
func Candidates(kind authz.NodeKind, key string, cur, at graph.NameRef) []authz.Candidate {
	c := authz.Candidate{Kind: kind, Key: key, Namespace: cur.Namespace, Name: cur.Name}
	if cur.Namespace == "" {
		c.Namespace, c.Name = at.Namespace, at.Name
	}
	out := []authz.Candidate{c}
	if at.Namespace != "" && (at.Namespace != c.Namespace || at.Name != c.Name) {
		out = append(out, authz.Candidate{Kind: kind, Key: key, Namespace: at.Namespace, Name: at.Name})
	}
	return out
}

// DatasetCandidates names a dataset row under its current and its asOf identity.
func DatasetCandidates(d graph.DatasetRow) []authz.Candidate {
	return Candidates(authz.KindDataset, d.Key, graph.NameRef{Namespace: d.CurrentNS, Name: d.CurrentName},
		graph.NameRef{Namespace: d.Namespace, Name: d.Name})
}
