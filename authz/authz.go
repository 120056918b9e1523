// Package authz is the permission seam of the query path: who is asking (Principal, carried in the request
// context) and what they may see (Policy: the scope once per request, one batched Check of mixed privileges per
// traversal hop or lookup, and the policy-wide Settings). AllowAll (development, tests) and grantpolicy.GrantPolicy (the
// grant model) implement it.
//
// Invariant: the expander never returns, caches into a principal's view, or expands a node the Policy did not
// allow for that principal.
package authz

import (
	"context"
	"slices"
	"strings"
)

// Principal is the authenticated caller. Subject is stable across requests (user id, service account, token id).
type Principal struct {
	Subject string
	Kind    string // "user", "service", "producer"
	// Restrict, when set, confines the principal to PRODUCE on these namespaces (canonical, sorted, one per line)
	// and within its own grants: nothing else is allowed to it. It is set for tokens a service exchanged for a run
	// (RFC 8693 token exchange, ADR 0051); the grant policy applies it to every check.
	Restrict string
}

// RestrictTo is the Restrict value of a set of canonical namespaces.
func RestrictTo(namespaces []string) string {
	ns := slices.Clone(namespaces)
	slices.Sort(ns)
	return strings.Join(slices.Compact(ns), "\n")
}

// Restricted reports whether the principal is confined to producing in some namespaces.
func (p Principal) Restricted() bool { return p.Restrict != "" }

// RestrictedTo are the namespaces a restricted principal may produce in (nil when unrestricted).
func (p Principal) RestrictedTo() []string {
	if p.Restrict == "" {
		return nil
	}
	return strings.Split(p.Restrict, "\n")
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

// Policy decides visibility while the expander walks the graph. It is the one permission seam of the query side:
// the lineage service asks Scope once per request, Check once per hop or lookup, and Settings for how hidden
// neighbours and sensitive nodes are shown.
type Policy interface {
	// Scope returns the principal's scope for cache keys and the permissionsFiltered flag.
	Scope(ctx context.Context, p Principal) (Scope, error)
	// Check answers a batch of checks of mixed privileges in one call; allowed[i] answers checks[i]. The expander
	// asks one batch per hop (VIEW_LINEAGE on the nodes it leaves, DESCRIBE on the nodes and jobs it reaches),
	// never one call per node.
	Check(ctx context.Context, p Principal, checks []Check) (allowed []bool, err error)
	// Settings are the policy-wide settings: hidden-neighbour mode, sensitive namespaces and tags.
	Settings() Settings
}

// allowAllFingerprint is the scope fingerprint of AllowAll.
const allowAllFingerprint = "allow-all"

// AllowAll lets every principal see everything. It is the policy until grants exist.
type AllowAll struct{}

var _ Policy = AllowAll{}

// Scope implements Policy.
func (AllowAll) Scope(context.Context, Principal) (Scope, error) {
	return Scope{Fingerprint: allowAllFingerprint, Global: true}, nil
}

// Check implements Policy: everything is allowed.
func (AllowAll) Check(_ context.Context, _ Principal, checks []Check) ([]bool, error) {
	out := make([]bool, len(checks))
	for i := range out {
		out[i] = true
	}
	return out, nil
}

// CoversNamespaces lets every principal see everything in every namespace (the scoped trust trends' question).
func (AllowAll) CoversNamespaces(context.Context, Principal, Privilege, []string) bool { return true }

// Settings implements Policy: OMIT, nothing sensitive.
func (AllowAll) Settings() Settings { return Settings{}.Normalized() }
