package resolvers

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/cache"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/catalog/eventstatus"
	"github.com/headwater-data/headwater/governance/mutation"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/search"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/truststore"
)

// testDeps is what a test configures of the query side; handler builds the services from it the way
// cmd/headwater does (the catalog, the cache store, the lineage service) and hands them to NewHandler.
type testDeps struct {
	Store      *graph.Store
	Redis      *redis.Client // nil: cache off
	Log        *slog.Logger
	Registerer prometheus.Registerer
	Lineage    lineage.Config
	Search     search.Config
	Clock      func() time.Time
	// Canonicalizer canonicalises identifiers like ingestion does (nil: identity).
	Canonicalizer catalog.Canonicalizer
	Policy        authz.Policy
	Redactor      *authz.Redactor
	Auditor       audit.Auditor
	Manager       *manage.Manager
	Tokens        *apitoken.Manager
	AuditReader   AuditReader
	Limits        guard.Limits
	Trust         *trust.Service
	Inventory     *registry.Service
	Canaries      *canaries.Service
	// Gaps is the lineage gaps' source (nil: one over Trust when Trust is set).
	Gaps *gapsource.Source
	// Submitter takes the governance mutations' events (nil: the mutations answer UNAVAILABLE).
	Submitter mutation.Submitter
}

func (d testDeps) handler() (http.Handler, error) {
	cat, svc, err := d.services()
	if err != nil {
		return nil, err
	}
	srch, err := search.New(d.Store, cat, search.Options{Config: d.Search, Policy: d.Policy, Clock: d.Clock,
		CursorKey: d.Lineage.CursorKey})
	if err != nil {
		return nil, err
	}
	events := eventstatus.New(d.Store, cat, eventstatus.Options{Policy: d.Policy, CursorKey: d.Lineage.CursorKey})
	var gov *mutation.Service
	if d.Submitter != nil {
		gov = mutation.New(cat, d.Submitter, d.Policy, d.Clock)
	}
	return NewHandler(Deps{Lineage: svc, Catalog: cat, Search: srch, Events: events, Log: d.Log, Registerer: d.Registerer, Clock: d.Clock,
		Auditor: d.Auditor, Manager: d.Manager, Tokens: d.Tokens, AuditReader: d.AuditReader, Limits: d.Limits,
		Trust: d.Trust, Inventory: d.Inventory, Canaries: d.Canaries, Governance: gov})
}

// services builds the catalog and the lineage service the handler serves (a test that asks the lineage service
// directly, as the pre-release report does, builds its own the same way).
func (d testDeps) services() (*catalog.Catalog, *lineage.Service, error) {
	cat, err := catalog.New(d.Store, catalog.Options{Policy: d.Policy, Redactor: d.Redactor, Canon: d.Canonicalizer,
		Clock: d.Clock, Log: d.Log})
	if err != nil {
		return nil, nil, err
	}
	svc, err := lineage.NewService(d.Store, lineage.Options{Config: d.Lineage, Cache: cache.New(d.Redis, d.Registerer, d.Log),
		Policy: d.Policy, Redactor: d.Redactor, Catalog: cat, Clock: d.Clock, Log: d.Log, Trust: d.trustSource()})
	if err != nil {
		return nil, nil, err
	}
	return cat, svc, nil
}

// trustSource gives the lineage service the trust gaps when a trust service is configured.
func (d testDeps) trustSource() lineage.TrustSource {
	if d.Gaps != nil {
		return d.Gaps
	}
	if d.Trust == nil {
		return nil
	}
	return gapsource.New(d.Trust, truststore.NewStore(d.Store), d.Clock)
}
