package trust

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// LabelSample is the stored trend point of one signal for everything (written only by package sampler).
const LabelSample = "CoverageSample"

// LabelScopeSample is the stored trend point of one signal for one scope (written only by package sampler).
const LabelScopeSample = "CoverageScopeSample"

// Limits of the scoped trends (docs/trust.md "Trend").
const (
	// MaxTrendScopes bounds the criticalities, the producers and the namespaces one scoped round samples, each
	// (in name order; configured scopes always); the rest get no point in that round and are counted in
	// headwater_trust_trend_scopes_skipped.
	MaxTrendScopes = 256
	// MaxScopeNamespaces bounds the namespaces one configured scope lists.
	MaxScopeNamespaces = 64
)

// Point is one stored trend point.
type Point struct {
	At                     time.Time
	Numerator, Denominator int
}

// TrendScope kinds: what a trend's points count.
const (
	ScopeAll         = "all"         // everything (the global samples)
	ScopeNamespace   = "namespace"   // one namespace
	ScopeNamed       = "scope"       // a configured set of namespaces (Config.TrendScopes)
	ScopeCriticality = "criticality" // expected jobs of one criticality (and their runs and edges)
	ScopeProducer    = "producer"    // one producer principal (the producer figures)
)

// TrendScope names the points a trend answers: Kind and Key ("" for ScopeAll).
type TrendScope struct{ Kind, Key string }

// String is the scope as the API shows it: "all" or "kind:key".
func (s TrendScope) String() string {
	if s.Kind == ScopeAll {
		return ScopeAll
	}
	return s.Kind + ":" + s.Key
}

// StoredKey is the scope property of a stored scoped point.
func (s TrendScope) StoredKey() string { return s.String() }

// Trend is a figure's stored points and the scope they count; Scope is nil when no trend is served to this
// caller for this report (see Service.Trend).
type Trend struct {
	Scope  *TrendScope
	Points []Point
}

// IsProducerSignal reports whether sig is keyed by producer principal (not narrowed by namespace or criticality).
func IsProducerSignal(sig Signal) bool {
	return sig == SignalQuietProducers || sig == SignalRejectedEvents
}

// trendPrivilege is what a scoped trend of sig needs on every namespace of its scope: the privilege the live
// figure checks on what it counts (edges: VIEW_LINEAGE on their datasets; everything else: DESCRIBE).
func trendPrivilege(sig Signal) authz.Privilege {
	if sig == SignalEdgeFreshness {
		return authz.PrivViewLineage
	}
	return authz.PrivDescribe
}

// NamespaceCoverer is the permission question of the scoped trends: does p hold priv on everything in each of
// the namespaces, now and later, with nothing beneath denied (grantpolicy.GrantPolicy, authz.AllowAll). A
// Permissions without it serves scoped trends only to callers who may describe everything.
type NamespaceCoverer interface {
	CoversNamespaces(ctx context.Context, p authz.Principal, priv authz.Privilege, namespaces []string) bool
}

// Trend returns the stored points of sig since since for report r, and the scope they count. named picks a
// configured scope (Config.TrendScopes) on a report not narrowed by namespace or criticality. The rule
// (docs/trust.md "Trend"): a caller who may describe everything gets any scope; another caller gets a
// namespace or configured scope only when it holds the signal's privilege on all of the scope's namespaces
// (nothing beneath denied), and then the points count only what lies wholly inside those namespaces, as the
// sampler computed them with exactly that visibility; producer figures' points are served to the producer
// itself; criticality and everything only to callers who may describe everything. Otherwise Scope is nil.
func (s *Service) Trend(ctx context.Context, r *Report, sig Signal, since time.Time, named string) (Trend, error) {
	scope, inside, ok, err := s.trendScope(ctx, r, sig, named)
	if err != nil || !ok {
		return Trend{}, err
	}
	var pts []Point
	if scope.Kind == ScopeAll {
		pts, err = s.r.Samples(ctx, sig, ms(since))
	} else {
		pts, err = s.r.ScopeSamples(ctx, scope.StoredKey(), sig, ms(since), inside)
	}
	if err != nil {
		return Trend{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return Trend{Scope: &scope, Points: pts}, nil
}

// trendScope decides which stored points answer (sig, r) for r's caller: the scope, whether the caller gets
// the inside-only values (a covering caller without a global grant), and whether any are served.
func (s *Service) trendScope(ctx context.Context, r *Report, sig Signal, named string) (TrendScope, bool, bool, error) {
	q, global := r.Query, r.Scope.Global
	if named != "" {
		if q.Namespace != "" || q.Criticality != "" {
			return TrendScope{}, false, false, fmt.Errorf("%w: trend scope: a configured scope needs a report not "+
				"narrowed by namespace or criticality", ErrInvalid)
		}
		nss, ok := s.scopes[named]
		if !ok {
			return TrendScope{}, false, false, fmt.Errorf("%w: trend scope: no configured scope %q (trust.trend-scopes)", ErrInvalid, named)
		}
		if IsProducerSignal(sig) {
			return TrendScope{}, false, false, nil
		}
		return TrendScope{Kind: ScopeNamed, Key: named}, true, global || s.covers(ctx, r.caller, sig, nss), nil
	}
	if IsProducerSignal(sig) {
		p, ok := r.producerScope()
		switch {
		case !ok:
			return TrendScope{}, false, false, nil
		case p == "":
			return TrendScope{Kind: ScopeAll}, false, global, nil
		}
		return TrendScope{Kind: ScopeProducer, Key: p}, false, true, nil
	}
	switch {
	case q.Namespace != "" && q.Criticality != "":
		return TrendScope{}, false, false, nil
	case q.Criticality != "":
		return TrendScope{Kind: ScopeCriticality, Key: q.Criticality}, false, global, nil
	case q.Namespace != "":
		if global {
			return TrendScope{Kind: ScopeNamespace, Key: q.Namespace}, false, true, nil
		}
		return TrendScope{Kind: ScopeNamespace, Key: q.Namespace}, true, s.covers(ctx, r.caller, sig, []string{q.Namespace}), nil
	}
	return TrendScope{Kind: ScopeAll}, false, global, nil
}

func (s *Service) covers(ctx context.Context, p authz.Principal, sig Signal, namespaces []string) bool {
	c, ok := s.perms.(NamespaceCoverer)
	return ok && c.CoversNamespaces(ctx, p, trendPrivilege(sig), namespaces)
}

// ActiveProducers lists the producer principals with events in the quiet lookback (the producer scopes of the
// scoped trends).
func (s *Service) ActiveProducers(ctx context.Context) ([]string, error) {
	rows, err := s.r.Activity(ctx, "", ms(s.clock().Add(-s.cfg.QuietLookback)))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Producer)
	}
	return out, nil
}

// TrendScopes returns the configured scopes, by name, with their namespaces.
func (s *Service) TrendScopes() map[string][]string { return s.scopes }

// Inside returns the service computing as a caller who sees exactly what lies in namespaces (DESCRIBE and
// VIEW_LINEAGE there, nothing elsewhere, nothing known only by key): the sampler's view for the inside-only
// values of a scoped point.
func (s *Service) Inside(namespaces []string) *Service {
	in := *s
	in.perms = insidePerms{namespaces: slices.Clone(namespaces)}
	return &in
}

// insidePerms allows DESCRIBE and VIEW_LINEAGE (and what they imply) on candidates named in one of its
// namespaces, and nothing else.
type insidePerms struct{ namespaces []string }

func (p insidePerms) Scope(context.Context, authz.Principal) (authz.Scope, error) {
	return authz.Scope{Fingerprint: "inside:" + strings.Join(p.namespaces, "\x1f")}, nil
}

func (p insidePerms) Check(_ context.Context, _ authz.Principal, cs []authz.Check) ([]bool, error) {
	out := make([]bool, len(cs))
	for i, c := range cs {
		okPriv := c.Priv == authz.PrivDescribe || c.Priv == authz.PrivViewLineage || c.Priv == authz.PrivList
		out[i] = okPriv && c.Candidate.Namespace != "" && slices.Contains(p.namespaces, c.Candidate.Namespace)
	}
	return out, nil
}
