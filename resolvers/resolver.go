// Package resolvers is Headwater's GraphQL layer (gqlgen): the generated executable schema, thin resolvers that
// map arguments and call one lineage.Service, search.Searcher, catalog.Catalog, eventstatus.Service or
// mutation.Service (the governance mutations) method each, per-request dataloaders, the error presenter (the only
// place domain errors become client errors), and the HTTP handler, whose request limits (transport, document, complexity, depth, cost, APQ) are package
// resolvers/guard's. It builds none of the services it calls: cmd/headwater does.
//
// generated.go and model/ are generated from ../schema.graphqls by `go run github.com/99designs/gqlgen generate`;
// never edit them by hand.
package resolvers

import (
	"context"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/catalog/eventstatus"
	"github.com/headwater-data/headwater/governance/mutation"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/search"
	"github.com/headwater-data/headwater/trust"
)

// Resolver is the root resolver: it holds the services; request-scoped state (loaders, principal, audit) is in
// context.
type Resolver struct {
	svc     *lineage.Service
	catalog *catalog.Catalog
	search  *search.Searcher
	events  *eventstatus.Service
	manager *manage.Manager   // nil: management mutations answer FORBIDDEN
	tokens  *apitoken.Manager // nil: token mutations answer FORBIDDEN
	// auditGate (the Manager) and auditReader serve auditRecords; either nil: it answers FORBIDDEN.
	auditGate   auditGate
	auditReader AuditReader
	// trust serves coverage, inventory the inventory operations; nil: they answer UNAVAILABLE.
	trust     *trust.Service
	inventory *registry.Service
	canaryReg *canaries.Service
	// release answers releaseImpact (nil: UNAVAILABLE).
	release ReleaseImpacts
	// governance runs setTags, removeTags, block and unblock (nil: UNAVAILABLE).
	governance *mutation.Service
}

// ReleaseImpacts answers the pre-release impact of an uploaded candidate (declare.ImpactService).
type ReleaseImpacts interface {
	ReleaseImpact(ctx context.Context, candidate string) (*api.ReleaseImpact, error)
}
