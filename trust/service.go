package trust

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// Permissions is what the signals ask of the permission model (grantpolicy.GrantPolicy, authz.AllowAll).
type Permissions interface {
	Scope(ctx context.Context, p authz.Principal) (authz.Scope, error)
	Check(ctx context.Context, p authz.Principal, checks []authz.Check) ([]bool, error)
}

// ErrInvalid classes a request argument the signals cannot use; the message names it and the rule.
var ErrInvalid = errors.New("invalid coverage request")

// ErrUnavailable classes a store or policy failure.
var ErrUnavailable = errors.New("the trust signals are unavailable, retry later")

// Service computes the signals.
type Service struct {
	r         Reader
	perms     Permissions
	cfg       Config
	factors   map[string]float64
	scopes    map[string][]string // configured trend scopes (Config.TrendScopes)
	clock     func() time.Time
	inventory *expectedCache
}

// NewService validates cfg and returns the service; a nil Permissions is authz.AllowAll.
func NewService(r Reader, perms Permissions, cfg Config, clock func() time.Time) (*Service, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	factors, _ := cfg.factors() // Validate parsed it
	scopes, _ := cfg.trendScopes()
	if perms == nil {
		perms = authz.AllowAll{}
	}
	if clock == nil {
		clock = time.Now
	}
	return &Service{r: r, perms: perms, cfg: cfg, factors: factors, scopes: scopes, clock: clock, inventory: &expectedCache{}}, nil
}

// Unfiltered is the service computing without permission filtering (authz.AllowAll): the sampler's, whose
// figures count everything.
func (s *Service) Unfiltered() *Service {
	all := *s
	all.perms = authz.AllowAll{}
	return &all
}

// Config is the effective configuration.
func (s *Service) Config() Config { return s.cfg }

// Query narrows a report ("" = any; Window 0 = the default).
type Query struct {
	Namespace   string
	Criticality string
	Producer    string
	Window      time.Duration
}

// Report is one caller's coverage answer; figures are computed when first asked (and then kept).
type Report struct {
	svc     *Service
	caller  authz.Principal
	Query   Query
	Now     time.Time
	Scope   authz.Scope
	mu      sync.Mutex
	figures map[Signal]*Figure
	jobs    *jobsMemo
}

// Report starts a report for caller.
func (s *Service) Report(ctx context.Context, caller authz.Principal, q Query) (*Report, error) {
	if q.Window == 0 {
		q.Window = s.cfg.Window
	}
	if q.Window < time.Minute || q.Window > s.cfg.MaxWindow {
		return nil, fmt.Errorf("%w: window: must be 1m..%s, got %s", ErrInvalid, s.cfg.MaxWindow, q.Window)
	}
	scope, err := s.perms.Scope(ctx, caller)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return &Report{svc: s, caller: caller, Query: q, Now: s.clock().UTC(), Scope: scope,
		figures: map[Signal]*Figure{}}, nil
}

// PermissionsFiltered is true for every caller without a global describe grant.
func (r *Report) PermissionsFiltered() bool { return !r.Scope.Global }

// Figure computes (once) the figure of one signal.
func (r *Report) Figure(ctx context.Context, sig Signal) (*Figure, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.figures[sig]; ok {
		return f, nil
	}
	f, err := r.compute(ctx, sig)
	if err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	f.rep = r
	r.figures[sig] = f
	return f, nil
}

// Trend returns the figure's stored points since since, of the configured scope named or else of the report's
// own narrowing (see Service.Trend).
func (f *Figure) Trend(ctx context.Context, since time.Time, named string) (Trend, error) {
	if f.rep == nil {
		return Trend{}, nil
	}
	return f.rep.svc.Trend(ctx, f.rep, f.Signal, since, named)
}

// TrendScope is the scope Trend (with the same named scope) answers; nil when none is served.
func (f *Figure) TrendScope(ctx context.Context, named string) (*TrendScope, error) {
	if f.rep == nil {
		return nil, nil
	}
	sc, _, ok, err := f.rep.svc.trendScope(ctx, f.rep, f.Signal, named)
	if err != nil || !ok {
		return nil, err
	}
	return &sc, nil
}

func (r *Report) compute(ctx context.Context, sig Signal) (*Figure, error) {
	switch sig {
	case SignalJobsReporting, SignalJobsInstrumented:
		m, err := r.expected(ctx)
		if err != nil {
			return nil, err
		}
		if sig == SignalJobsReporting {
			return m.reporting, nil
		}
		return m.instrumented, nil
	case SignalRunsWithoutTerminal:
		return r.runs(ctx)
	case SignalQuietProducers, SignalRejectedEvents:
		return r.producers(ctx, sig)
	case SignalUnresolvedIdentities:
		return r.unresolved(ctx)
	case SignalEdgeFreshness:
		return r.edges(ctx)
	case SignalColumnLineage:
		return r.columns(ctx)
	case SignalCanaries:
		return r.canaries(ctx)
	case SignalReportedWrites:
		return r.reportedWrites(ctx)
	}
	return nil, fmt.Errorf("%w: signal: unknown %q", ErrInvalid, sig)
}

func (r *Report) filter() Filter {
	return Filter{Namespace: r.Query.Namespace, Criticality: r.Query.Criticality}
}

// allowed runs one batch of checks as the report's caller.
func (r *Report) allowed(ctx context.Context, b *checks) ([]bool, error) {
	return allowedIDs(ctx, r.svc.perms, r.caller, b)
}

// allowedIDs runs one batch of checks in one policy call and returns, per id, whether all its checks passed.
func allowedIDs(ctx context.Context, perms Permissions, caller authz.Principal, b *checks) ([]bool, error) {
	if len(b.list) == 0 {
		return make([]bool, b.ids), nil
	}
	res, err := perms.Check(ctx, caller, b.list)
	if err != nil {
		return nil, err
	}
	out := make([]bool, b.ids)
	for i := range out {
		out[i] = true
	}
	for i, ok := range res {
		if !ok {
			out[b.owner[i]] = false
		}
	}
	return out, nil
}

// each answers every check on its own, in one policy call.
func (r *Report) each(ctx context.Context, cs []authz.Check) ([]bool, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	return r.svc.perms.Check(ctx, r.caller, cs)
}

// checks collects the checks of several ids (id i passes when all its checks pass).
type checks struct {
	list  []authz.Check
	owner []int
	ids   int
}

// next starts a new id and returns it.
func (b *checks) next() int { b.ids++; return b.ids - 1 }

func (b *checks) add(id int, priv authz.Privilege, c authz.Candidate) {
	b.list = append(b.list, authz.Check{Priv: priv, Candidate: c})
	b.owner = append(b.owner, id)
}

func jobCand(key, ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindJob, Key: key, Namespace: ns, Name: name}
}

func datasetCand(key, ns, name string) authz.Candidate {
	return authz.Candidate{Kind: authz.KindDataset, Key: key, Namespace: ns, Name: name}
}

func ms(t time.Time) int64 { return t.UTC().UnixMilli() }

func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
