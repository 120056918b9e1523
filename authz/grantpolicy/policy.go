// Package grantpolicy compiles the grant state into decisions and serves it as the authz.Policy: the Evaluator
// is one grant epoch compiled per effective role set into a trie of allow and deny masks (a check is a few map
// lookups, no round trip); GrantPolicy keeps the evaluator of the current epoch, reloading it from a GrantSource
// when the epoch moves. No I/O of its own: the grant source and the name resolver are interfaces.
//
// Invariant: every answer comes from one compiled evaluator; a deny anywhere on a node's path wins over every allow.
package grantpolicy

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// GrantSource is what GrantPolicy reads: the whole grant state, and the epoch alone (one small read).
type GrantSource interface {
	Load(ctx context.Context) (grant.Snapshot, error)
	Epoch(ctx context.Context) (int64, error)
}

// NodeName is a node's current namespace and name.
type NodeName struct{ Namespace, Name string }

// NameResolver finds the current names of nodes known only by key (jobs on edges, runs' jobs), in one batch.
type NameResolver interface {
	Names(ctx context.Context, keys []string) (map[string]NodeName, error)
}

// PolicyOptions configure a GrantPolicy.
type PolicyOptions struct {
	Settings      authz.Settings
	EnvironmentOf EnvironmentOf // nil: ENVIRONMENT grants match nothing
	Names         NameResolver  // nil: candidates without a namespace are decided by ROOT grants alone
	// EpochCheckInterval is how often Scope reads the grant epoch; 0 reads it on every Scope call (one indexed
	// read per request), so a grant change made on any replica takes effect on the next query.
	EpochCheckInterval time.Duration
	Clock              func() time.Time
	Log                *slog.Logger
	Metrics            *PolicyMetrics // nil: not instrumented
}

// GrantPolicy is the grant-based Policy: it evaluates a compiled Evaluator of the current epoch and reloads it
// when the epoch changes. Scope checks the epoch (see EpochCheckInterval); Check and the Can* checks use the
// evaluator Scope last made current, so a request sees one grant state unless a change lands mid-request, in
// which case it sees the newer one.
type GrantPolicy struct {
	src   GrantSource
	opts  PolicyOptions
	cur   atomic.Pointer[Evaluator]
	last  atomic.Int64 // unix nanos of the last epoch check
	mu    sync.Mutex   // serialises reloads
	clock func() time.Time
}

var _ authz.Policy = (*GrantPolicy)(nil)

// NewGrantPolicy loads the grant state and compiles it.
func NewGrantPolicy(ctx context.Context, src GrantSource, opts PolicyOptions) (*GrantPolicy, error) {
	if err := opts.Settings.Validate(); err != nil {
		return nil, err
	}
	g := &GrantPolicy{src: src, opts: opts, clock: opts.Clock}
	if g.clock == nil {
		g.clock = time.Now
	}
	if g.opts.Log == nil {
		g.opts.Log = slog.New(slog.DiscardHandler)
	}
	if err := g.reload(ctx, -1); err != nil {
		return nil, err
	}
	return g, nil
}

// Evaluator returns the evaluator in force.
func (g *GrantPolicy) Evaluator() *Evaluator { return g.cur.Load() }

// Settings implements Policy: the policy-wide settings (hidden-neighbour mode, sensitive namespaces and tags).
func (g *GrantPolicy) Settings() authz.Settings { return g.cur.Load().Settings() }

// Refresh reads the epoch and recompiles when it changed. The management service calls it after a change.
func (g *GrantPolicy) Refresh(ctx context.Context) error {
	epoch, err := g.src.Epoch(ctx)
	if err != nil {
		g.opts.Metrics.failed()
		return fmt.Errorf("%w: read grant epoch: %w", authz.ErrUnavailable, err)
	}
	g.last.Store(g.clock().UnixNano())
	if epoch == g.cur.Load().Epoch() {
		return nil
	}
	return g.reload(ctx, epoch)
}

func (g *GrantPolicy) reload(ctx context.Context, seen int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cur := g.cur.Load(); cur != nil && seen >= 0 && cur.Epoch() >= seen {
		return nil // another caller reloaded meanwhile
	}
	snap, err := g.src.Load(ctx)
	if err != nil {
		g.opts.Metrics.failed()
		return fmt.Errorf("%w: load grants: %w", authz.ErrUnavailable, err)
	}
	g.cur.Store(NewEvaluator(snap, g.opts.Settings, g.opts.EnvironmentOf))
	g.last.Store(g.clock().UnixNano())
	g.opts.Metrics.loaded(snap.Epoch)
	g.opts.Log.Info("grants loaded", "epoch", snap.Epoch, "roles", len(snap.Roles), "grants", len(snap.Grants),
		"bindings", len(snap.Bindings))
	return nil
}

func (g *GrantPolicy) fresh(ctx context.Context) error {
	if g.opts.EpochCheckInterval > 0 && g.clock().UnixNano()-g.last.Load() < int64(g.opts.EpochCheckInterval) {
		return nil
	}
	return g.Refresh(ctx)
}

// Scope implements Policy: the fingerprint of p's effective grants (bindings plus claimed roles in ctx), the
// epoch and the settings; Global only when p may describe everything and nothing is denied to it.
func (g *GrantPolicy) Scope(ctx context.Context, p authz.Principal) (authz.Scope, error) {
	if err := g.fresh(ctx); err != nil {
		return authz.Scope{}, err
	}
	return g.cur.Load().Scope(p, authz.ClaimedRoles(ctx, p)), nil
}

// Can answers priv on one named candidate (VIEW_LINEAGE on the node a hop leaves, VIEW_SQL, VIEW_SENSITIVE).
// A candidate without a namespace is allowed only by an undenied ROOT grant; use Check to resolve names.
func (g *GrantPolicy) Can(ctx context.Context, p authz.Principal, priv authz.Privilege, c authz.Candidate) bool {
	return g.cur.Load().Can(p, authz.ClaimedRoles(ctx, p), priv, c)
}

// CanOn answers priv on a securable itself (MANAGE_GRANTS on what a grant change touches).
func (g *GrantPolicy) CanOn(ctx context.Context, p authz.Principal, priv authz.Privilege, s grant.Securable) bool {
	return g.cur.Load().CanOn(p, authz.ClaimedRoles(ctx, p), priv, s)
}

// CoversNamespaces answers whether p holds priv on everything in every one of namespaces, now and later, with
// nothing beneath denied (the scoped trust trends' rule, docs/trust.md "Trend").
func (g *GrantPolicy) CoversNamespaces(ctx context.Context, p authz.Principal, priv authz.Privilege, namespaces []string) bool {
	ev, claimed := g.cur.Load(), authz.ClaimedRoles(ctx, p)
	for _, ns := range namespaces {
		if !ev.CoversNamespace(p, claimed, priv, ns) {
			return false
		}
	}
	return len(namespaces) > 0
}

// CanProduce answers whether p may write an event of a job in jobNamespace with outputs in outputNamespaces:
// PRODUCE on the job's namespace and on every output's namespace. It returns the first namespace denied.
// Namespaces must be canonical (as the normaliser makes them).
func (g *GrantPolicy) CanProduce(ctx context.Context, p authz.Principal, jobNamespace string, outputNamespaces []string) (bool, string) {
	ev, claimed := g.cur.Load(), authz.ClaimedRoles(ctx, p)
	for _, ns := range append([]string{jobNamespace}, outputNamespaces...) {
		if ns == "" || !ev.CanOn(p, claimed, authz.PrivProduce, grant.Securable{Kind: grant.SecNamespace, Namespace: ns}) {
			return false, ns
		}
	}
	return true, ""
}

// named fills in the names of candidates that carry only a key. Keys the resolver does not know stay nameless
// (and are then visible only through an undenied ROOT grant).
func (g *GrantPolicy) named(ctx context.Context, in []authz.Candidate) ([]authz.Candidate, error) {
	var keys []string
	for _, c := range in {
		if c.Namespace == "" && c.Key != "" {
			keys = append(keys, c.Key)
		}
	}
	if len(keys) == 0 || g.opts.Names == nil {
		return in, nil
	}
	names, err := g.opts.Names.Names(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("%w: resolve node names: %w", authz.ErrUnavailable, err)
	}
	out := make([]authz.Candidate, len(in))
	copy(out, in)
	for i, c := range out {
		if n, ok := names[c.Key]; ok && c.Namespace == "" {
			out[i].Namespace, out[i].Name = n.Namespace, n.Name
		}
	}
	return out, nil
}

// Check implements Policy: candidates known only by key are named in one batch (NameResolver), then every
// check is an in-memory evaluation against the evaluator in force.
func (g *GrantPolicy) Check(ctx context.Context, p authz.Principal, checks []authz.Check) ([]bool, error) {
	cands := make([]authz.Candidate, len(checks))
	for i, c := range checks {
		cands[i] = c.Candidate
	}
	named, err := g.named(ctx, cands)
	if err != nil {
		return nil, err
	}
	ev, claimed := g.cur.Load(), authz.ClaimedRoles(ctx, p)
	v := ev.viewOf(p, claimed)
	out := make([]bool, len(checks))
	for i, c := range checks {
		out[i] = v.can(bit(c.Priv), named[i], ev.envOf)
	}
	return out, nil
}

// SeesEverything reports whether p holds MANAGE_GRANTS on ROOT with no DENY grant anywhere.
func (g *GrantPolicy) SeesEverything(ctx context.Context, p authz.Principal) bool {
	ev, claimed := g.cur.Load(), authz.ClaimedRoles(ctx, p)
	return ev.CanOn(p, claimed, authz.PrivManageGrants, grant.Root()) && ev.viewOf(p, claimed).anyDeny == 0
}
