// Package eventstatus answers producers about their own events (ADR 0033): what became of an event id
// (PROJECTED, QUARANTINED, PENDING; `event(id)`) and the caller's quarantined events, paged within a scan budget
// behind sealed caller-bound cursors (`quarantinedEvents`). Event ids are scoped by producer principal (ADR 0019).
// A projected event's run is shown only when the caller may describe it, through the catalog's run loader.
package eventstatus

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/internal/seal"
)

// RunLoader loads runs by key, only those the caller may describe (catalog.Catalog.RunsByKeys).
type RunLoader interface {
	RunsByKeys(ctx context.Context, keys []string) (map[string]*api.Run, error)
}

// Options wires a Service.
type Options struct {
	Policy authz.Policy // nil: authz.AllowAll
	// CursorKey seals quarantine cursors (lineage.Config.CursorKey; empty: a random per-process key).
	CursorKey string
}

// Service answers event(id) and quarantinedEvents.
type Service struct {
	store  *catalogread.Store
	runs   RunLoader
	policy authz.Policy
	cursor seal.Codec
}

// New builds the service over store; runs shows a projected event's run.
func New(store *graph.Store, runs RunLoader, o Options) *Service {
	s := &Service{store: catalogread.New(store), runs: runs, policy: o.Policy, cursor: seal.Codec{Key: []byte(o.CursorKey)}}
	if s.policy == nil {
		s.policy = authz.AllowAll{}
	}
	if o.CursorKey == "" {
		s.cursor.Key = seal.RandomKey()
	}
	return s
}

// scope is the caller's permission scope (a global describe grant sees every principal's quarantine).
func (s *Service) scope(ctx context.Context) (authz.Scope, error) {
	return s.policy.Scope(ctx, authz.FromContext(ctx))
}

func strOrNil(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

func timeOrNil(ms int64) *time.Time {
	if ms == 0 || ms >= graph.OpenEnd {
		return nil
	}
	t := graph.FromMillis(ms)
	return &t
}
