package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/graph"
)

// Canaries are known paths (ADR 0032): "from reaches to through job", at dataset or field level, optionally
// with a transformation type on the path's last edge. They are registered like inventories (MANAGE_INVENTORY on
// every namespace they name, audited) and checked by package canary, which stores each check's outcome here.

// Audit operations of canaries.
const (
	OpRegisterCanary = "registerCanary"
	OpRetireCanary   = "retireCanary"
)

// MaxCanaries bounds the active canaries (each is checked by a lineage walk on every round).
const MaxCanaries = 1_000

// CanaryEnd is one end of a canary: a dataset, or one of its fields when Field is set.
type CanaryEnd struct {
	Namespace, Name, Field string
}

// Canary is one registered known path and the outcome of its latest check.
type Canary struct {
	Name           string
	From, To       CanaryEnd
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

// RegisterCanary stores (or replaces) a canary; the caller needs MANAGE_INVENTORY on every namespace it names
// and on those of the canary it replaces. Identities are canonicalised like events. Audited.
func (s *Service) RegisterCanary(ctx context.Context, caller authz.Principal, c Canary) (Canary, error) {
	if err := c.validate(); err != nil {
		_ = s.record(ctx, caller, OpRegisterCanary, audit.DecisionDeny, "canary "+c.Name+": "+err.Error())
		return c, invalid(err)
	}
	var err error
	if c, err = s.canonCanary(c); err != nil {
		return c, invalid(err)
	}
	nss := c.Namespaces()
	prev, found, err := s.store.Canary(ctx, c.Name)
	if err != nil {
		return c, unavailable(err)
	}
	if found && prev.RetiredAt.IsZero() {
		nss = append(nss, prev.Namespaces()...)
	}
	if err := s.allowed(ctx, caller, OpRegisterCanary, "canary "+c.Name, nss); err != nil {
		return c, err
	}
	active, err := s.store.ActiveCanaries(ctx)
	if err != nil {
		return c, unavailable(err)
	}
	if len(active) >= MaxCanaries && !(found && prev.RetiredAt.IsZero()) {
		return c, invalid(fmt.Errorf("canaries: at most %d active canaries (registry.MaxCanaries)", MaxCanaries))
	}
	c.RegisteredAt, c.RegisteredBy = s.clock().UTC(), caller.Subject
	if err := s.store.PutCanary(ctx, c); err != nil {
		return c, unavailable(err)
	}
	return c, s.record(ctx, caller, OpRegisterCanary, audit.DecisionAllow, "canary "+c.Name+" registered")
}

func (s *Service) canonCanary(c Canary) (Canary, error) {
	if s.canon == nil {
		return c, nil
	}
	var err error
	for _, e := range []*CanaryEnd{&c.From, &c.To} {
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

// RetireCanary retires an active canary (refused like a forbidden one when unknown or retired). Audited.
func (s *Service) RetireCanary(ctx context.Context, caller authz.Principal, name string) error {
	prev, found, err := s.store.Canary(ctx, name)
	if err != nil {
		return unavailable(err)
	}
	if !found || !prev.RetiredAt.IsZero() {
		_ = s.record(ctx, caller, OpRetireCanary, audit.DecisionDeny, "canary "+name+": not active")
		return fmt.Errorf("%w: retire canary %s", authz.ErrForbidden, name)
	}
	if err := s.allowed(ctx, caller, OpRetireCanary, "canary "+name, prev.Namespaces()); err != nil {
		return err
	}
	if err := s.store.RetireCanary(ctx, name, s.clock()); err != nil {
		return unavailable(err)
	}
	return s.record(ctx, caller, OpRetireCanary, audit.DecisionAllow, "canary "+name+" retired")
}

// Canaries lists the canaries (active and retired) whose every namespace the caller may manage.
func (s *Service) Canaries(ctx context.Context, caller authz.Principal) ([]Canary, error) {
	all, err := s.store.Canaries(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	out := all[:0]
	for _, c := range all {
		if s.missing(ctx, caller, c.Namespaces()) == "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// LabelCanary is the label of stored canaries.
const LabelCanary = "Canary"

const canaryProps = `c{.key, .fromNs, .fromName, .fromField, .toNs, .toName, .toField, .jobNs, .jobName,
  .transformation, .registeredAt, .registeredBy, .retiredAt, .checkedAt, .ok, .failingSince, .failure, .checks, .passes}`

// PutCanary creates or replaces a canary's registration (its check history restarts).
func (s *Store) PutCanary(ctx context.Context, c Canary) error {
	_, err := s.run(ctx, `MERGE (c:`+LabelCanary+` {key: $name})
SET c.fromNs = $fromNs, c.fromName = $fromName, c.fromField = $fromField, c.toNs = $toNs, c.toName = $toName,
  c.toField = $toField, c.jobNs = $jobNs, c.jobName = $jobName, c.transformation = $tr, c.registeredAt = $at,
  c.registeredBy = $by, c.retiredAt = null, c.checkedAt = null, c.ok = null, c.failingSince = null, c.failure = null,
  c.checks = 0, c.passes = 0`, map[string]any{"name": c.Name, "fromNs": c.From.Namespace, "fromName": c.From.Name,
		"fromField": c.From.Field, "toNs": c.To.Namespace, "toName": c.To.Name, "toField": c.To.Field,
		"jobNs": c.JobNamespace, "jobName": c.JobName, "tr": c.Transformation, "at": graph.Millis(c.RegisteredAt),
		"by": c.RegisteredBy})
	return err
}

// RetireCanary sets a canary's retiredAt.
func (s *Store) RetireCanary(ctx context.Context, name string, now time.Time) error {
	_, err := s.run(ctx, `MATCH (c:`+LabelCanary+` {key: $name}) SET c.retiredAt = $now`,
		map[string]any{"name": name, "now": graph.Millis(now)})
	return err
}

// Canary reads one canary.
func (s *Store) Canary(ctx context.Context, name string) (Canary, bool, error) {
	recs, err := s.run(ctx, `MATCH (c:`+LabelCanary+` {key: $name}) RETURN `+canaryProps+` AS c`, map[string]any{"name": name})
	if err != nil || len(recs) == 0 {
		return Canary{}, false, err
	}
	return canaryOf(recs[0]), true, nil
}

// Canaries reads every canary, by name.
func (s *Store) Canaries(ctx context.Context) ([]Canary, error) { return s.canaries(ctx, false) }

// ActiveCanaries reads the canaries not retired, by name.
func (s *Store) ActiveCanaries(ctx context.Context) ([]Canary, error) { return s.canaries(ctx, true) }

func (s *Store) canaries(ctx context.Context, active bool) ([]Canary, error) {
	recs, err := s.run(ctx, `MATCH (c:`+LabelCanary+`) WHERE NOT $active OR c.retiredAt IS NULL
RETURN `+canaryProps+` AS c ORDER BY c.key`, map[string]any{"active": active})
	if err != nil {
		return nil, err
	}
	out := make([]Canary, len(recs))
	for i, r := range recs {
		out[i] = canaryOf(r)
	}
	return out, nil
}

// SetCanaryCheck records one check's outcome: ok, or the failure (failingSince kept from the first failed check
// of a run of failures).
func (s *Store) SetCanaryCheck(ctx context.Context, name string, at time.Time, ok bool, failure string) error {
	_, err := s.run(ctx, `MATCH (c:`+LabelCanary+` {key: $name}) WHERE c.retiredAt IS NULL
SET c.failingSince = CASE WHEN $ok THEN null ELSE coalesce(c.failingSince, $at) END,
  c.checkedAt = $at, c.ok = $ok, c.failure = CASE WHEN $ok THEN null ELSE $failure END,
  c.checks = coalesce(c.checks, 0) + 1, c.passes = coalesce(c.passes, 0) + CASE WHEN $ok THEN 1 ELSE 0 END`,
		map[string]any{"name": name, "at": graph.Millis(at), "ok": ok, "failure": failure})
	return err
}

func canaryOf(r interface{ Get(string) (any, bool) }) Canary {
	v, _ := r.Get("c")
	p := graph.Props(v.(map[string]any))
	return Canary{Name: p.Str("key"), From: CanaryEnd{p.Str("fromNs"), p.Str("fromName"), p.Str("fromField")},
		To: CanaryEnd{p.Str("toNs"), p.Str("toName"), p.Str("toField")}, JobNamespace: p.Str("jobNs"),
		JobName: p.Str("jobName"), Transformation: p.Str("transformation"), RegisteredAt: ms(p.Int("registeredAt")),
		RegisteredBy: p.Str("registeredBy"), RetiredAt: ms(p.Int("retiredAt")), CheckedAt: ms(p.Int("checkedAt")),
		OK: p.Bool("ok"), FailingSince: ms(p.Int("failingSince")), Failure: p.Str("failure"), Checks: p.Int("checks"),
		Passes: p.Int("passes")}
}

func ms(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
