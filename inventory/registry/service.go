// Package registry registers expected-job inventories (package inventory) per source: read with the source's
// reader, canonicalised like event identities, checked against the caller's MANAGE_INVENTORY grants, stored in
// Neo4j (replacing the source's previous inventory whole) and audited. It serves the HTTP endpoint
// POST /api/v1/inventory/{source} and the GraphQL list and retire operations.
//
// Invariants: a registration changes only namespaces where the caller holds MANAGE_INVENTORY, both those of the
// new inventory and those of the registration it replaces; registering the same inventory again writes
// nothing; every registration and retirement, allowed or refused, is one audit record (through package manage,
// the path canaries share; ADR 0034).
package registry

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/airflowdags"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
	"github.com/headwater-data/headwater/inventory/joblist"
	"github.com/headwater-data/headwater/inventory/manage"
)

// Audit operations.
const (
	OpRegister = "registerInventory"
	OpRetire   = "retireInventory"
)

// Canonicalizer canonicalises identities exactly as ingestion does (normalize.Normalizer).
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (string, string, error)
}

// Request is one registration.
type Request struct {
	Source string
	Kind   inventory.Kind
	// JobNamespace is where the source's jobs report (dbt-ol's OPENLINEAGE_NAMESPACE, Airflow's
	// AIRFLOW__OPENLINEAGE__NAMESPACE); required for dbt and airflow, unused for lists.
	JobNamespace string
	// DatasetNamespace is the dbt adapter's OpenLineage namespace (duckdb://<path>, postgres://host:port, ...).
	DatasetNamespace string
	// Schedule applies to dbt nodes whose meta names none.
	Schedule string
	// ScheduleDag names the Airflow DAG (dag_id) that runs the dbt project: when Schedule is empty, the schedule
	// and paused state of that DAG as an active Airflow registration lists it apply to dbt nodes whose meta names
	// none. A DAG not registered (or in a namespace the caller may not manage) gives no schedule known.
	ScheduleDag string
	Body        io.Reader
	paused      bool // the ScheduleDag DAG is paused
}

// Service is the registry.
type Service struct {
	store   *Store
	canon   Canonicalizer
	gate    *manage.Gate
	changed func() // after a registration that wrote and a retirement (nil: nothing)
}

// NewService returns the registry; a nil authorizer allows everything, a nil auditor audits nothing.
func NewService(store *Store, canon Canonicalizer, az manage.Authorizer, audit audit.Auditor, clock func() time.Time) *Service {
	return &Service{store: store, canon: canon, gate: manage.NewGate(az, audit, clock)}
}

// OnChange sets what runs after every registration that wrote and every retirement: the trust signals drop
// their in-memory expected-writer index (trust.Service.InventoryChanged). Set it before serving.
func (s *Service) OnChange(fn func()) { s.changed = fn }

func (s *Service) notify() {
	if s.changed != nil {
		s.changed()
	}
}

// Read turns a request body into a normalised, canonical inventory (pure apart from the reader).
func (s *Service) Read(req Request) (inventory.Inventory, error) {
	inv := inventory.Inventory{Source: req.Source, Kind: req.Kind}
	if err := inventory.ValidateSource(req.Source); err != nil {
		return inv, invalid(err)
	}
	jobs, err := readJobs(req)
	if err != nil {
		return inv, invalid(err)
	}
	if len(jobs) > inventory.MaxJobs {
		return inv, invalid(fmt.Errorf("jobs: at most %d expected jobs per source, got %d", inventory.MaxJobs, len(jobs)))
	}
	for i := range jobs {
		if err := s.canonical(&jobs[i]); err != nil {
			return inv, invalid(fmt.Errorf("jobs[%d] (%s): %w", i, jobs[i].Name, err))
		}
	}
	inv.Jobs = jobs
	if err := inv.Normalize(); err != nil {
		return inv, invalid(err)
	}
	return inv, nil
}

func readJobs(req Request) ([]inventory.Job, error) {
	switch req.Kind {
	case inventory.KindDbt:
		m, err := dbtmanifest.Read(req.Body)
		if err != nil {
			return nil, err
		}
		return dbtmanifest.Expected(m, dbtmanifest.Options{JobNamespace: req.JobNamespace,
			DatasetNamespace: req.DatasetNamespace, Schedule: req.Schedule, Paused: req.paused})
	case inventory.KindAirflow:
		return airflowdags.Read(req.Body, req.JobNamespace)
	case inventory.KindList:
		return joblist.Read(req.Body)
	}
	_, err := inventory.ParseKind(string(req.Kind))
	return nil, err
}

// namespace is a job namespace as ingestion canonicalises it (unchanged when it cannot be).
func (s *Service) namespace(ns string) string {
	if s.canon == nil {
		return ns
	}
	if c, _, err := s.canon.Job(ns, "x"); err == nil {
		return c
	}
	return ns
}

// canonical canonicalises the job's identity, its match names and its outputs like event identities.
func (s *Service) canonical(j *inventory.Job) error {
	if s.canon == nil {
		return nil
	}
	ns, name, err := s.canon.Job(j.Namespace, j.Name)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(j.MatchNames))
	for _, m := range j.MatchNames {
		_, mn, err := s.canon.Job(j.Namespace, m)
		if err != nil {
			return fmt.Errorf("matchNames: %w", err)
		}
		names = append(names, mn)
	}
	for i, o := range j.Outputs {
		_, ons, on, err := s.canon.Dataset(o.Namespace, o.Name)
		if err != nil {
			return fmt.Errorf("outputs[%d]: %w", i, err)
		}
		j.Outputs[i] = inventory.Dataset{Namespace: ons, Name: on}
	}
	j.Namespace, j.Name, j.MatchNames = ns, name, names
	return nil
}

// Register reads, checks and stores one source's inventory as caller. A dbt or Airflow registration names its job
// namespace before the body: a caller without MANAGE_INVENTORY there is refused before anything is read.
func (s *Service) Register(ctx context.Context, caller authz.Principal, req Request) (Result, error) {
	if req.JobNamespace != "" {
		if err := s.allowed(ctx, caller, OpRegister, req.Source, []string{s.namespace(req.JobNamespace)}); err != nil {
			return Result{}, err
		}
	}
	req, err := s.dagSchedule(ctx, caller, req)
	if err != nil {
		return Result{}, err
	}
	inv, err := s.Read(req)
	if err != nil {
		return Result{}, err
	}
	prev, found, err := s.store.Get(ctx, inv.Source)
	if err != nil {
		return Result{}, unavailable(err)
	}
	nss := inv.Namespaces()
	if found && prev.RetiredAt.IsZero() {
		nss = append(nss, prev.Namespaces...)
	}
	if err := s.allowed(ctx, caller, OpRegister, inv.Source, nss); err != nil {
		return Result{}, err
	}
	res, err := s.store.Register(ctx, inv, caller.Subject, s.gate.Now())
	if err != nil {
		return Result{}, unavailable(err)
	}
	reason := fmt.Sprintf("source %s (%s): %d jobs, %d added, %d updated, %d retired", inv.Source, inv.Kind,
		res.Jobs, res.Added, res.Updated, res.Retired)
	if res.Unchanged {
		reason = fmt.Sprintf("source %s (%s): unchanged, %d jobs", inv.Source, inv.Kind, res.Jobs)
	} else {
		s.notify()
	}
	return res, s.record(ctx, caller, OpRegister, audit.DecisionAllow, reason)
}

// dagSchedule fills a dbt request's schedule from the Airflow DAG that runs the project (ScheduleDag), as its
// active Airflow registration lists it, when the request names no schedule of its own. Only DAGs in namespaces
// the caller may manage count; one listed by more than one Airflow source with different schedules is refused.
func (s *Service) dagSchedule(ctx context.Context, caller authz.Principal, req Request) (Request, error) {
	if req.Kind != inventory.KindDbt || req.Schedule != "" || req.ScheduleDag == "" {
		return req, nil
	}
	rows, err := s.store.DagSchedules(ctx, req.ScheduleDag)
	if err != nil {
		return req, unavailable(err)
	}
	var found []DagSchedule
	for _, r := range rows {
		if s.gate.Manages(ctx, caller, []string{r.Namespace}) {
			found = append(found, r)
		}
	}
	for _, r := range found[min(1, len(found)):] {
		if r.Schedule != found[0].Schedule || r.Paused != found[0].Paused {
			return req, invalid(fmt.Errorf("scheduleDag: DAG %q is listed with different schedules by Airflow sources %s and %s",
				req.ScheduleDag, found[0].Source, r.Source))
		}
	}
	if len(found) > 0 {
		req.Schedule, req.paused = found[0].Schedule, found[0].Paused
	}
	return req, nil
}

// Retire retires an active registration and its expected jobs. An unknown (or already retired) source is
// refused exactly like one the caller may not manage, so source names cannot be probed.
func (s *Service) Retire(ctx context.Context, caller authz.Principal, source string) error {
	prev, found, err := s.store.Get(ctx, source)
	if err != nil {
		return unavailable(err)
	}
	if !found || !prev.RetiredAt.IsZero() {
		_ = s.record(ctx, caller, OpRetire, audit.DecisionDeny, "source "+source+": no active registration")
		return fmt.Errorf("%w: retire %s", authz.ErrForbidden, source)
	}
	if err := s.allowed(ctx, caller, OpRetire, source, prev.Namespaces); err != nil {
		return err
	}
	if _, err := s.store.Retire(ctx, source, s.gate.Now()); err != nil {
		return unavailable(err)
	}
	s.notify()
	return s.record(ctx, caller, OpRetire, audit.DecisionAllow, "source "+source+" retired")
}

// List returns the registrations the caller may manage (MANAGE_INVENTORY on every namespace they name).
func (s *Service) List(ctx context.Context, caller authz.Principal) ([]Source, error) {
	all, err := s.store.List(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	out := all[:0]
	for _, src := range all {
		if s.gate.Manages(ctx, caller, src.Namespaces) {
			out = append(out, src)
		}
	}
	return out, nil
}

func (s *Service) allowed(ctx context.Context, caller authz.Principal, op, source string, nss []string) error {
	return s.gate.Allowed(ctx, caller, op, "source "+source, nss)
}

func (s *Service) record(ctx context.Context, p authz.Principal, op string, d audit.Decision, reason string) error {
	return s.gate.Record(ctx, p, op, d, reason)
}

func invalid(err error) error { return manage.Invalid(err) }

func unavailable(err error) error { return manage.Unavailable(err) }
