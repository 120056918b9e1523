package lineage

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/graph/hopread"
	"github.com/headwater-data/headwater/internal/permcheck"
	"github.com/headwater-data/headwater/internal/seal"
	"github.com/headwater-data/headwater/lineage/trustgaps"
	"github.com/headwater-data/headwater/lineage/walk"
)

// Options wires a Service.
type Options struct {
	Config Config
	Cache  *cache.Store // nil: no cache
	Policy authz.Policy // nil: authz.AllowAll
	// Redactor makes REDACT placeholder ids; nil answers REDACT policies as OMIT (which discloses less).
	Redactor *authz.Redactor
	// Catalog finds start nodes by name and materialises the nodes a walk found (required).
	Catalog *catalog.Catalog
	Clock   func() time.Time
	Log     *slog.Logger
	// Trust gives the gaps JOB_NOT_REPORTING and PRODUCER_STALE and the answers' coverage (nil: none; ADR 0032).
	Trust TrustSource
	// Governance holds the tag classes and their propagation rules for piiFlow (zero: the defaults; ADR 0042).
	Governance governance.Config
}

// Service answers the lineage and impact queries. Resolvers call one method per field and nothing else.
type Service struct {
	store   *catalogread.Store
	catalog *catalog.Catalog
	policy  authz.Policy
	clock   func() time.Time
	cfg     Config
	cursor  cursorCodec
	starts  *startCache // nil without a cache store: start names are resolved in Neo4j on every request
	walker  walker
	// answerer is the walker, decorated by the results tier when there is a cache (resultcache.go), and that by
	// the trust gaps when there is a trust source (gaps.go).
	answerer answerer
	trust    *trustGaps // nil without a trust source
	gov      governance.Config
}

// NewService validates the configuration and composes the query path: the neighbour reader (Neo4j, decorated by
// the neighbour tier) under the walker, and the walker under the results tier, when a cache is configured.
func NewService(store *graph.Store, o Options) (*Service, error) {
	cfg := o.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Catalog == nil {
		return nil, errors.New("lineage: Options.Catalog is required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Policy == nil {
		o.Policy = authz.AllowAll{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	s := &Service{store: catalogread.New(store), catalog: o.Catalog, policy: o.Policy, clock: o.Clock, cfg: cfg,
		cursor: cursorCodec{key: []byte(cfg.CursorKey)}, gov: o.Governance}
	if cfg.CursorKey == "" {
		s.cursor.key = seal.RandomKey()
		o.Log.Warn("lineage cursor key not configured; using a random per-process key", "setting", "lineage.cursor-key")
	}
	var reader walk.NeighborReader = walk.StoreReader{Store: hopread.New(store)}
	if o.Cache != nil {
		reader = cachedReader{inner: reader, store: o.Cache, ttl: cfg.RawCacheTTL}
		s.starts = newStartCache(StartCacheTTL, s.clock)
	}
	s.walker = walker{store: s.store, reader: reader, gate: permcheck.New(o.Policy, o.Redactor), catalog: o.Catalog,
		gens: o.Cache, cfg: cfg, clock: s.clock}
	s.answerer = s.walker
	if o.Cache != nil {
		s.answerer = resultCache{inner: s.walker, store: o.Cache, catalog: o.Catalog, redact: s.walker.gate.Redact,
			cfg: cfg, resolve: s.resolveStart}
	}
	if o.Trust != nil && !cfg.DisableTrustGaps {
		s.trust = &trustGaps{inner: s.answerer, gaps: trustgaps.New(o.Trust, o.Catalog, cfg.TrustGapsTTL, s.clock)}
		s.answerer = *s.trust
	}
	return s, nil
}

// asOf returns the instant a request is about and how it appears in cache keys.
func (s *Service) asOf(t *time.Time) (int64, string) {
	if t != nil {
		ms := graph.Millis(*t)
		return ms, itoa64(ms)
	}
	now := s.clock()
	return graph.Millis(now), "now@" + itoa64(graph.Millis(now.Truncate(s.cfg.NowBucket)))
}

// scope is the caller's permission scope (cache fingerprint, permissionsFiltered).
func (s *Service) scope(ctx context.Context) (authz.Scope, error) {
	return s.policy.Scope(ctx, authz.FromContext(ctx))
}
