package lineage

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/graph"
)

// Canonicalizer canonicalises identifiers exactly as ingestion does (package ingest/normalize implements it).
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (string, string, error)
}

// identity is the Canonicalizer used when none is configured.
type identity struct{}

func (identity) Dataset(ns, name string) (string, string, string, error) { return "", ns, name, nil }
func (identity) Job(ns, name string) (string, string, error)             { return ns, name, nil }

// Options wires a Service.
type Options struct {
	Config Config
	Cache  *cache.Store // nil: no cache
	Policy authz.Policy // nil: authz.AllowAll
	// Redactor makes REDACT placeholder ids; nil answers REDACT policies as OMIT (which discloses less).
	Redactor *authz.Redactor
	Canon    Canonicalizer
	Clock    func() time.Time
	Log      *slog.Logger
}

// Service answers the lineage queries. Resolvers call one method per field and nothing else.
type Service struct {
	store  *graph.Store
	reader NeighborReader
	cache  *cache.Store
	policy authz.Policy
	gate   gate
	canon  Canonicalizer
	clock  func() time.Time
	cfg    Config
	cursor cursorCodec
	log    *slog.Logger
	starts *startCache // nil without a cache store: start names are resolved in Neo4j on every request
	scans  *principalScans
}

// NewService validates the configuration and composes the neighbour reader: Neo4j, decorated by the cache.
func NewService(store *graph.Store, o Options) (*Service, error) {
	cfg := o.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{store: store, cache: o.Cache, policy: o.Policy, canon: o.Canon, clock: o.Clock, cfg: cfg,
		cursor: cursorCodec{key: []byte(cfg.CursorKey)}, log: o.Log, scans: newPrincipalScans(cfg.SearchScanPerPrincipal)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.policy == nil {
		s.policy = authz.AllowAll{}
	}
	s.gate = newGate(s.policy, o.Redactor)
	if s.canon == nil {
		s.canon = identity{}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if cfg.CursorKey == "" {
		s.cursor.key = randomKey()
		s.log.Warn("lineage cursor key not configured; using a random per-process key", "setting", "lineage.cursor-key")
	}
	s.reader = StoreReader{Store: store}
	if o.Cache != nil {
		s.reader = cachedReader{inner: s.reader, store: o.Cache, ttl: cfg.RawCacheTTL}
		s.starts = newStartCache(StartCacheTTL, s.clock)
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

// storeErr maps a store failure to the public UNAVAILABLE error unless it already is a domain error.
func storeErr(err error) error {
	if err == nil {
		return nil
	}
	var de *Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return unavailable(err)
}

// visible asks the policy, in one call, whether the caller may describe a node under every identity given
// (current and asOf); a hidden root is then answered exactly like a missing one, and the denial is audited.
func (s *Service) visible(ctx context.Context, cands ...authz.Candidate) (bool, error) {
	b := newBatch()
	b.add("n", authz.PrivDescribe, cands...)
	if err := b.run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return false, err
	}
	if !b.ok("n") {
		if a := authz.RequestAuditFrom(ctx); a != nil && len(cands) > 0 {
			a.Denied(cands[0], "not visible to the caller")
		}
		return false, nil
	}
	return true, nil
}

// scope is the caller's permission scope (cache fingerprint, permissionsFiltered).
func (s *Service) scope(ctx context.Context) (authz.Scope, error) {
	return s.policy.Scope(ctx, authz.FromContext(ctx))
}

// randomKey is a fresh 32-byte signing key.
func randomKey() []byte {
	k := make([]byte, minCursorKey)
	_, _ = rand.Read(k)
	return k
}
