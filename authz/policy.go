package authz

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// GrantSource is what GrantPolicy reads: the whole grant state, and the epoch alone (one small read).
type GrantSource interface {
	Load(ctx context.Context) (Snapshot, error)
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
	Settings      Settings
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

var _ Policy = (*GrantPolicy)(nil)

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
func (g *GrantPolicy) Settings() Settings { return g.cur.Load().Settings() }

// Refresh reads the epoch and recompiles when it changed. The management service calls it after a change.
func (g *GrantPolicy) Refresh(ctx context.Context) error {
	epoch, err := g.src.Epoch(ctx)
	if err != nil {
		g.opts.Metrics.failed()
		return fmt.Errorf("%w: read grant epoch: %w", ErrUnavailable, err)
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
		return fmt.Errorf("%w: load grants: %w", ErrUnavailable, err)
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
func (g *GrantPolicy) Scope(ctx context.Context, p Principal) (Scope, error) {
	if err := g.fresh(ctx); err != nil {
		return Scope{}, err
	}
	return g.cur.Load().Scope(p, ClaimedRoles(ctx, p)), nil
}

// Can answers priv on one named candidate (VIEW_LINEAGE on the node a hop leaves, VIEW_SQL, VIEW_SENSITIVE).
// A candidate without a namespace is allowed only by an undenied ROOT grant; use Check to resolve names.
func (g *GrantPolicy) Can(ctx context.Context, p Principal, priv Privilege, c Candidate) bool {
	return g.cur.Load().Can(p, ClaimedRoles(ctx, p), priv, c)
}

// CanOn answers priv on a securable itself (MANAGE_GRANTS on what a grant change touches).
func (g *GrantPolicy) CanOn(ctx context.Context, p Principal, priv Privilege, s Securable) bool {
	return g.cur.Load().CanOn(p, ClaimedRoles(ctx, p), priv, s)
}

// CanProduce answers whether p may write an event of a job in jobNamespace with outputs in outputNamespaces:
// PRODUCE on the job's namespace and on every output's namespace. It returns the first namespace denied.
// Namespaces must be canonical (as the normaliser makes them).
func (g *GrantPolicy) CanProduce(ctx context.Context, p Principal, jobNamespace string, outputNamespaces []string) (bool, string) {
	ev, claimed := g.cur.Load(), ClaimedRoles(ctx, p)
	for _, ns := range append([]string{jobNamespace}, outputNamespaces...) {
		if ns == "" || !ev.CanOn(p, claimed, PrivProduce, Securable{Kind: SecNamespace, Namespace: ns}) {
			return false, ns
		}
	}
	return true, ""
}

// named fills in the names of candidates that carry only a key. Keys the resolver does not know stay nameless
// (and are then visible only through an undenied ROOT grant).
func (g *GrantPolicy) named(ctx context.Context, in []Candidate) ([]Candidate, error) {
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
		return nil, fmt.Errorf("%w: resolve node names: %w", ErrUnavailable, err)
	}
	out := make([]Candidate, len(in))
	copy(out, in)
	for i, c := range out {
		if n, ok := names[c.Key]; ok && c.Namespace == "" {
			out[i].Namespace, out[i].Name = n.Namespace, n.Name
		}
	}
	return out, nil
}
