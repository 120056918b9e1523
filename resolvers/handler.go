package resolvers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/catalog/eventstatus"
	"github.com/headwater-data/headwater/governance/mutation"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/resolvers/guard"
	"github.com/headwater-data/headwater/search"
	"github.com/headwater-data/headwater/trust"
)

// Deps is what the GraphQL handler needs, built by its caller (`headwater serve` wires them in cmd/headwater).
type Deps struct {
	// Lineage answers lineage and impact, Search search, Catalog every other lookup (all three required).
	Lineage *lineage.Service
	Catalog *catalog.Catalog
	Search  *search.Searcher
	// Events answers event(id) and quarantinedEvents (required).
	Events *eventstatus.Service
	Log    *slog.Logger
	// Registerer receives the GraphQL layer's metrics (nil: not registered).
	Registerer prometheus.Registerer
	Clock      func() time.Time
	// Auditor receives one record per GraphQL request that touched sensitive nodes or was denied (nil: no audit).
	Auditor audit.Auditor
	// Manager serves the grant-management mutations (nil: they answer FORBIDDEN).
	Manager *manage.Manager
	// Tokens serves createApiToken and revokeApiToken (nil: they answer FORBIDDEN).
	Tokens *apitoken.Manager
	// AuditReader serves auditRecords (auditkafka.NewKafkaAuditReader on the audit topic); it needs Manager too,
	// which decides who may read and audits every read. Either nil: auditRecords answers FORBIDDEN.
	AuditReader AuditReader
	// Limits bound each request before gqlgen parses it (zero values: the defaults).
	Limits guard.Limits
	// Trust serves coverage and Inventory the inventory operations (nil: they answer UNAVAILABLE).
	Trust     *trust.Service
	Inventory *registry.Service
	// Canaries serves the canary operations (nil: they answer UNAVAILABLE).
	Canaries *canaries.Service
	// Release serves releaseImpact (nil: it answers UNAVAILABLE).
	Release ReleaseImpacts
	// Governance serves the tag and block mutations (nil: they answer UNAVAILABLE).
	Governance *mutation.Service
}

// NewHandler returns the GraphQL endpoint (POST and GET); the caller chooses the mount path and attaches the
// principal to the request context (authz.WithPrincipal) before it.
func NewHandler(d Deps) (http.Handler, error) {
	if d.Lineage == nil || d.Catalog == nil || d.Search == nil || d.Events == nil {
		return nil, errors.New("resolvers: Deps.Lineage, Deps.Catalog, Deps.Search and Deps.Events are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	lim := d.Limits.WithDefaults()
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	res := &Resolver{svc: d.Lineage, catalog: d.Catalog, search: d.Search, events: d.Events, manager: d.Manager, tokens: d.Tokens, auditReader: d.AuditReader,
		trust: d.Trust, inventory: d.Inventory, canaryReg: d.Canaries, release: d.Release, governance: d.Governance}
	if d.Manager != nil {
		res.auditGate = d.Manager
	}
	srv := newServer(res, lim, d.Registerer, d.Log)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// each request: its loaders and one search scan budget shared by all its search fields
		ctx := withLoaders(d.Search.WithRequestBudget(r.Context()), newLoaders(d.Catalog))
		if d.Auditor == nil {
			srv.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		a := audit.NewRequestAudit(authz.FromContext(ctx), "graphql", requestID(r), d.Clock)
		srv.ServeHTTP(w, r.WithContext(authz.WithRequestAudit(ctx, a)))
		if err := a.Flush(context.WithoutCancel(r.Context()), d.Auditor); err != nil {
			d.Log.Error("audit record not written", "err", err)
		}
	}), nil
}

// requestIDHeader is the header a proxy may set to correlate audit records with its logs.
const requestIDHeader = "X-Request-Id"

// requestID is the request's id for the audit record: the proxy's, else a random one.
func requestID(r *http.Request) string {
	if id := r.Header.Get(requestIDHeader); id != "" && len(id) <= maxRequestIDLen {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// maxRequestIDLen bounds a client-supplied request id.
const maxRequestIDLen = 128

// newServer is gqlgen's server in production shape: the request guards (guard.Install: the bounded transport,
// APQ, the document limits, gqlgen's parse and validation, the parsed-query cache, complexity and depth limits,
// the per-principal cost budget), then one error presenter.
func newServer(res *Resolver, lim guard.Limits, reg prometheus.Registerer, log *slog.Logger) *handler.Server {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: res}))
	guard.Install(srv, lim, reg)
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(recoverPanic(log))
	return srv
}
