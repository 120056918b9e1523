// Package canaries registers canaries, the known paths of the trust signals (ADR 0032): "from reaches to through
// job", at dataset or field level, optionally with a transformation type on the path's last edge. They are
// registered like inventories, through the same permission and audit path (package manage: MANAGE_INVENTORY on
// every namespace they name and on those of the canary they replace, one audit record per decision), over
// GraphQL, PUT/DELETE /api/v1/canaries/{name} and the CLI, and stored as (:Canary) nodes in Neo4j. Package
// canary checks them and stores each check's outcome here; package trust counts them.
//
// Invariants: at most MaxActive canaries are active; identities are canonicalised like events; a refused
// registration stores nothing.
package canaries

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/inventory/manage"
)

// Audit operations of canaries.
const (
	OpRegister = "registerCanary"
	OpRetire   = "retireCanary"
)

// MaxActive bounds the active canaries (each is checked by a lineage walk on every round).
const MaxActive = 1_000

// Canonicalizer canonicalises identities exactly as ingestion does (normalize.Normalizer).
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (string, string, error)
}

// Service registers, retires and lists canaries.
type Service struct {
	store   *Store
	canon   Canonicalizer
	gate    *manage.Gate
	changed func(name string) // after a registration (nil: nothing)
}

// NewService returns the canary registry; a nil authorizer allows everything, a nil auditor audits nothing.
func NewService(store *Store, canon Canonicalizer, az manage.Authorizer, aud audit.Auditor, clock func() time.Time) *Service {
	return &Service{store: store, canon: canon, gate: manage.NewGate(az, aud, clock)}
}

// OnChange sets what runs after every registration: the checker re-checks the canary at once
// (canary.Checker.Recheck). Set it before serving.
func (s *Service) OnChange(fn func(name string)) { s.changed = fn }

// End is one end of a canary: a dataset, or one of its fields when Field is set.
type End struct {
	Namespace, Name, Field string
}

// Canary is one registered known path and the outcome of its latest check.
type Canary struct {
	Name           string
	From, To       End
	JobNamespace   string // "" with JobName "": any job (or declared lineage)
	JobName        string
	Transformation string // a transformation type the last edge must carry (field level), "" for any
	RegisteredAt   time.Time
	RegisteredBy   string
	RetiredAt      time.Time
	// the latest check
	CheckedAt    time.Time
	OK           bool
	FailingSince time.Time // first failed check of the current failure (zero while it passes)
	Failure      string    // why the latest check failed, for people
	Checks       int64
	Passes       int64
}

// Namespaces are the namespaces a canary names.
func (c Canary) Namespaces() []string {
	out := []string{c.From.Namespace, c.To.Namespace}
	if c.JobNamespace != "" {
		out = append(out, c.JobNamespace)
	}
	return out
}

// Field reports whether the canary is at field level.
func (c Canary) Field() bool { return c.From.Field != "" }

// validate checks a canary to register; the error names the field and the rule.
func (c Canary) validate() error {
	switch {
	case c.Name == "" || len(c.Name) > 256 || strings.ContainsAny(c.Name, "\x00\n"):
		return errors.New("name: must be 1..256 bytes without NUL or newline")
	case c.From.Namespace == "" || c.From.Name == "":
		return errors.New("from: namespace and name are required")
	case c.To.Namespace == "" || c.To.Name == "":
		return errors.New("to: namespace and name are required")
	case (c.From.Field == "") != (c.To.Field == ""):
		return errors.New("from.field, to.field: give both (field level) or neither (dataset level)")
	case (c.JobNamespace == "") != (c.JobName == ""):
		return errors.New("job: give namespace and name, or no job")
	case c.Transformation != "" && !c.Field():
		return errors.New("transformation: only at field level")
	}
	return nil
}

// Register stores (or replaces) a canary; the caller needs MANAGE_INVENTORY on every namespace it names
// and on those of the canary it replaces. Identities are canonicalised like events. Audited.
func (s *Service) Register(ctx context.Context, caller authz.Principal, c Canary) (Canary, error) {
	if err := c.validate(); err != nil {
		_ = s.gate.Record(ctx, caller, OpRegister, audit.DecisionDeny, "canary "+c.Name+": "+err.Error())
		return c, manage.Invalid(err)
	}
	var err error
	if c, err = s.canonCanary(c); err != nil {
		return c, manage.Invalid(err)
	}
	nss := c.Namespaces()
	prev, found, err := s.store.Get(ctx, c.Name)
	if err != nil {
		return c, manage.Unavailable(err)
	}
	if found && prev.RetiredAt.IsZero() {
		nss = append(nss, prev.Namespaces()...)
	}
	if err := s.gate.Allowed(ctx, caller, OpRegister, "source canary "+c.Name, nss); err != nil {
		return c, err
	}
	active, err := s.store.Active(ctx)
	if err != nil {
		return c, manage.Unavailable(err)
	}
	if len(active) >= MaxActive && !(found && prev.RetiredAt.IsZero()) {
		return c, manage.Invalid(fmt.Errorf("canaries: at most %d active canaries (canaries.MaxActive)", MaxActive))
	}
	c.RegisteredAt, c.RegisteredBy = s.gate.Now().UTC(), caller.Subject
	if err := s.store.Put(ctx, c); err != nil {
		return c, manage.Unavailable(err)
	}
	if s.changed != nil {
		s.changed(c.Name)
	}
	return c, s.gate.Record(ctx, caller, OpRegister, audit.DecisionAllow, "canary "+c.Name+" registered")
}

func (s *Service) canonCanary(c Canary) (Canary, error) {
	if s.canon == nil {
		return c, nil
	}
	var err error
	for _, e := range []*End{&c.From, &c.To} {
		if _, e.Namespace, e.Name, err = s.canon.Dataset(e.Namespace, e.Name); err != nil {
			return c, fmt.Errorf("dataset %s %s: %w", e.Namespace, e.Name, err)
		}
	}
	if c.JobName != "" {
		if c.JobNamespace, c.JobName, err = s.canon.Job(c.JobNamespace, c.JobName); err != nil {
			return c, fmt.Errorf("job: %w", err)
		}
	}
	return c, nil
}

// Retire retires an active canary (refused like a forbidden one when unknown or retired). Audited.
func (s *Service) Retire(ctx context.Context, caller authz.Principal, name string) error {
	prev, found, err := s.store.Get(ctx, name)
	if err != nil {
		return manage.Unavailable(err)
	}
	if !found || !prev.RetiredAt.IsZero() {
		_ = s.gate.Record(ctx, caller, OpRetire, audit.DecisionDeny, "canary "+name+": not active")
		return fmt.Errorf("%w: retire canary %s", authz.ErrForbidden, name)
	}
	if err := s.gate.Allowed(ctx, caller, OpRetire, "source canary "+name, prev.Namespaces()); err != nil {
		return err
	}
	if err := s.store.Retire(ctx, name, s.gate.Now()); err != nil {
		return manage.Unavailable(err)
	}
	return s.gate.Record(ctx, caller, OpRetire, audit.DecisionAllow, "canary "+name+" retired")
}

// List lists the canaries (active and retired) whose every namespace the caller may manage.
func (s *Service) List(ctx context.Context, caller authz.Principal) ([]Canary, error) {
	all, err := s.store.All(ctx)
	if err != nil {
		return nil, manage.Unavailable(err)
	}
	out := all[:0]
	for _, c := range all {
		if s.gate.Manages(ctx, caller, c.Namespaces()) {
			out = append(out, c)
		}
	}
	return out, nil
}
