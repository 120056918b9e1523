// Package authz is the permission seam of the query path: who is asking (Principal, carried in the request
// context) and which nodes they may reach (Policy, asked once per traversal hop with the hop's whole candidate
// set). AllowAll (development, tests) and GrantPolicy (policy.go, the grant model) implement it.
//
// Invariant: the expander never returns, caches into a principal's view, or expands a node the Policy did not
// allow for that principal.
package authz

import "context"

// Principal is the authenticated caller. Subject is stable across requests (user id, service account, token id).
type Principal struct {
	Subject string
	Kind    string // "user", "service", "producer"
}

// AnonymousSubject is the subject of the principal used when the transport attached none (development, tests).
const AnonymousSubject = "anonymous"

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request, or the anonymous principal when none was attached.
func FromContext(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return Principal{Subject: AnonymousSubject, Kind: "user"}
}

// NodeKind says what a candidate is.
type NodeKind string

// Candidate node kinds.
const (
	KindDataset NodeKind = "DATASET"
	KindField   NodeKind = "FIELD"
	KindJob     NodeKind = "JOB"
)

// Candidate is one node a hop would reach, named by its current identity.
type Candidate struct {
	Kind      NodeKind
	Key       string
	Namespace string
	Name      string
}

// Scope is a principal's effective grants, reduced to what the cache and the answer need.
type Scope struct {
	// Fingerprint identifies the grant set (plus grant epoch); equal fingerprints see identical views.
	Fingerprint string
	// Global is true when the principal may describe the whole graph; otherwise answers set permissionsFiltered.
	Global bool
}

// Policy decides visibility while the expander walks the graph.
type Policy interface {
	// Scope returns the principal's scope for cache keys and the permissionsFiltered flag.
	Scope(ctx context.Context, p Principal) (Scope, error)
	// AllowHop is called once per hop with all candidate nodes of that hop; allowed[i] answers candidates[i].
	AllowHop(ctx context.Context, p Principal, candidates []Candidate) (allowed []bool, err error)
}

// AllowAllFingerprint is the scope fingerprint of AllowAll.
const AllowAllFingerprint = "allow-all"

// AllowAll lets every principal see everything. It is the policy until grants exist.
type AllowAll struct{}

var _ Policy = AllowAll{}

// Scope implements Policy.
func (AllowAll) Scope(context.Context, Principal) (Scope, error) {
	return Scope{Fingerprint: AllowAllFingerprint, Global: true}, nil
}

// AllowHop implements Policy.
func (AllowAll) AllowHop(_ context.Context, _ Principal, candidates []Candidate) ([]bool, error) {
	out := make([]bool, len(candidates))
	for i := range out {
		out[i] = true
	}
	return out, nil
}
