package search

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/internal/seal"
)

// Nodes loads the datasets and jobs a search found, keeping only those the caller may describe
// (catalog.Catalog: the same guards as every lookup).
type Nodes interface {
	DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*api.Dataset, error)
	JobsByKeys(ctx context.Context, keys []string) (map[string]*api.Job, error)
}

// Options wires a Searcher.
type Options struct {
	Config Config
	Policy authz.Policy // the caller's scope (permissionsFiltered); nil: authz.AllowAll
	Clock  func() time.Time
	// CursorKey seals search cursors (lineage.Config.CursorKey; empty: a random per-process key).
	CursorKey string
}

// Searcher answers search: datasets and jobs by name, only those the caller may describe, with scans bounded per
// page, per request and per principal.
type Searcher struct {
	store  *catalogread.Store
	nodes  Nodes
	policy authz.Policy
	clock  func() time.Time
	cfg    Config
	cursor seal.Codec
	scans  *principalScans
}

// New validates the configuration and builds the searcher over store, loading hits through nodes.
func New(store *graph.Store, nodes Nodes, o Options) (*Searcher, error) {
	cfg := o.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Searcher{store: catalogread.New(store), nodes: nodes, policy: o.Policy, clock: o.Clock, cfg: cfg,
		cursor: seal.Codec{Key: []byte(o.CursorKey)}, scans: newPrincipalScans(cfg.SearchScanPerPrincipal)}
	if s.policy == nil {
		s.policy = authz.AllowAll{}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if o.CursorKey == "" {
		s.cursor.Key = seal.RandomKey()
	}
	return s, nil
}

// scope is the caller's permission scope (permissionsFiltered).
func (s *Searcher) scope(ctx context.Context) (authz.Scope, error) {
	return s.policy.Scope(ctx, authz.FromContext(ctx))
}
