package catalog

import (
	"context"
	"log/slog"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/graph/catalogread"
	"github.com/headwater-data/headwater/internal/permcheck"
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

// Options wires a Catalog.
type Options struct {
	Policy authz.Policy // nil: authz.AllowAll
	// Redactor makes REDACT placeholder ids; nil answers REDACT policies as OMIT (which discloses less).
	Redactor *authz.Redactor
	Canon    Canonicalizer
	Clock    func() time.Time
	Log      *slog.Logger
}

// Catalog answers the lookups around the lineage graph: datasets, jobs, runs, versions, fields, aliases (event
// status and quarantine are catalog/eventstatus's). Resolvers call one method per field and nothing else.
type Catalog struct {
	store *catalogread.Store
	gate  permcheck.Gate
	canon Canonicalizer
	clock func() time.Time
	log   *slog.Logger
}

// New builds the catalog over store.
func New(store *graph.Store, o Options) (*Catalog, error) {
	s := &Catalog{store: catalogread.New(store), gate: permcheck.New(o.Policy, o.Redactor), canon: o.Canon, clock: o.Clock, log: o.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.canon == nil {
		s.canon = identity{}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s, nil
}

// asOf is the instant a lookup is about (default now).
func (s *Catalog) asOf(t *time.Time) int64 {
	if t != nil {
		return graph.Millis(*t)
	}
	return graph.Millis(s.clock())
}

// visible asks the policy, in one call, whether the caller may describe a node under every identity given
// (current and asOf); a hidden root is then answered exactly like a missing one, and the denial is audited.
func (s *Catalog) visible(ctx context.Context, cands ...authz.Candidate) (bool, error) {
	b := permcheck.NewBatch()
	b.Add("n", authz.PrivDescribe, cands...)
	if err := b.Run(ctx, s.gate, authz.FromContext(ctx)); err != nil {
		return false, err
	}
	if !b.OK("n") {
		if a := authz.RequestAuditFrom(ctx); a != nil && len(cands) > 0 {
			a.Denied(cands[0], "not visible to the caller")
		}
		return false, nil
	}
	return true, nil
}

// scope is the caller's permission scope (permissionsFiltered, whether anything may be withheld).
func (s *Catalog) scope(ctx context.Context) (authz.Scope, error) {
	return s.gate.Policy().Scope(ctx, authz.FromContext(ctx))
}
