// Package mutation is the governance mutations of ADR 0067: setTags, removeTags, block and unblock. Each builds
// one OpenLineage DatasetEvent carrying the dataset's full new tags list (the `tags` facet) or full block list (the
// `headwater_governance_block` facet), computed from the state in force at the mutation, and hands it to the
// gateway's per-event path (gateway.SubmitWith: validation, event id, Kafka durability; then the archive,
// projection and quarantine like every event). It never writes the graph.
//
// Permissions, in this order: the dataset must be one the caller may DESCRIBE (else NOT_FOUND, the same answer as
// a dataset that does not exist); MANAGE_TAGS on it (else FORBIDDEN naming the rule governance-manage-tags); a
// sensitive tag (the policy's sensitive tags) also needs VIEW_SENSITIVE (governance-view-sensitive). The write
// check the gateway applies is this package's guard: the one DatasetEvent on the one dataset checked, owned.
// Every call notes its operation, decision and dataset on the request's audit trail (one record per request).
//
// With a lease (WithLease, ADR 0081, ADR 0088) a mutation holds its dataset's lease, shared by every serve process,
// from reading the state in force until its own event is projected or quarantined, so the next mutation on the
// dataset computes its list from a state that includes this one: nothing is lost however many run at once, and
// however slow the projection. The mutation waits at most ProjectionWait for it; past that it answers accepted,
// not yet projected, and leaves the lease pending on its event (in Redis, not in the process): the next mutation
// takes it over once that event is projected or quarantined.
package mutation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance/lease"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// Input bounds of one mutation.
const (
	// MaxTagsPerCall bounds the tags one setTags or removeTags names.
	MaxTagsPerCall = 100
	// MaxTagBytes bounds a tag's key and its value.
	MaxTagBytes = 256
	// MaxReasonBytes bounds a reason.
	MaxReasonBytes = 1000
	// MaxBlocksPerDataset bounds a dataset's block list (the facet's own bound).
	MaxBlocksPerDataset = 1000
)

// The lease of a dataset (ADR 0081, ADR 0088). The whole of a mutation (LeaseWait + ProjectionWait + a publish)
// stays well under the HTTP server's default write timeout (60 s).
const (
	// LeaseWait bounds how long a mutation waits for the dataset's lease; then it answers UNAVAILABLE (retry).
	LeaseWait = 15 * time.Second
	// ProjectionWait bounds how long a mutation holding the lease waits for its event to be projected (or
	// quarantined); past it the answer is given (accepted, not yet projected) and the lease stays pending on the
	// event until it is projected or quarantined (PendingTTL at most).
	ProjectionWait = 15 * time.Second
	// LeaseTTL is the lease's expiry once its holder stops renewing it (it renews every LeaseTTL/3 while it
	// reads and publishes): a holder that dies before its event is durable frees the dataset after it.
	LeaseTTL = 25 * time.Second
	// PendingTTL bounds how long a lease stays pending on an event that is neither projected nor quarantined (a
	// consumer stopped that long): then it lapses and the next mutation reads the state without that event.
	PendingTTL = 24 * time.Hour
	// projectionPoll is how often the event's status is read while waiting for it.
	projectionPoll = 20 * time.Millisecond
	// leaseKeyPrefix starts a dataset's lease key (the dataset's stable key follows).
	leaseKeyPrefix = "governance:dataset:"
)

// The rules a refusal names.
const (
	RuleManageTags    = "governance-manage-tags"
	RuleViewSensitive = "governance-view-sensitive"
)

// Producer is the OpenLineage producer of the mutations' events (and the _producer of their facets).
const Producer = "https://github.com/headwater-data/headwater/governance/mutation"

const (
	datasetEventSchema = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent"
	tagsFacetURL       = "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json"
	blockFacetURL      = "https://headwater.dev/facets/GovernanceBlock.json"
	// SourcePrefix starts the source of a tag a mutation sets: "headwater:<principal>".
	SourcePrefix = "headwater:"
)

// Catalog finds what a mutation names, as the caller may see it (catalog.Catalog): unknown and invisible are the
// same NOT_FOUND.
type Catalog interface {
	FindDataset(ctx context.Context, ns, name string, t int64) (graph.DatasetRow, error)
	FindField(ctx context.Context, ref api.FieldRef, t int64) (graph.FieldRow, graph.DatasetRow, error)
	FindJob(ctx context.Context, ns, name string) (graph.JobRow, error)
	DatasetFacet(ctx context.Context, datasetKey, facet string) (json.RawMessage, error)
}

// Submitter is the gateway's per-event path with the write check given (gateway.Gateway).
type Submitter interface {
	SubmitWith(ctx context.Context, events [][]byte, guard gateway.Guard) (gateway.Submission, error)
}

// Leases takes a dataset's lease (lease.Redis), taking over a pending one whose event settled says is done:
// lease.ErrBusy when another holder kept it for the whole wait, lease.ErrUnavailable when Redis fails.
type Leases interface {
	Acquire(ctx context.Context, key string, settled lease.Settled) (*lease.Lease, error)
}

// EventStates reads an event's status by its stored key graph.EventKey(principal, id) (graph.Store), the path
// the API's event(id) answers from.
type EventStates interface {
	EventStatus(ctx context.Context, key string) (graph.EventStatusRow, error)
}

// Policy answers the privilege checks and the sensitive tags (authz.Policy).
type Policy interface {
	Check(ctx context.Context, p authz.Principal, checks []authz.Check) ([]bool, error)
	Settings() authz.Settings
}

// Service runs the four mutations.
type Service struct {
	cat    Catalog
	sub    Submitter
	policy Policy
	clock  func() time.Time
	leases Leases      // nil: no lease (a test's single caller)
	events EventStates // with leases
	wait   time.Duration
}

// New returns the service; a nil clock is time.Now.
func New(cat Catalog, sub Submitter, policy Policy, clock func() time.Time) *Service {
	if clock == nil {
		clock = time.Now
	}
	return &Service{cat: cat, sub: sub, policy: policy, clock: clock, wait: ProjectionWait}
}

// WithLease makes every mutation hold its dataset's lease from reading the state until its event is projected
// (read from events), waiting at most ProjectionWait for it (ADR 0081).
func (s *Service) WithLease(l Leases, events EventStates) *Service {
	s.leases, s.events = l, events
	return s
}

// Tag is one tag a mutation names; Value "" is none (removeTags: any value).
type Tag struct{ Key, Value string }

// Edge is the column edge a block names: into the target field from From through the job.
type Edge struct {
	JobNamespace, JobName string
	From                  api.FieldRef
}

// Target is what a block names: a field of a dataset, optionally only the edge into it.
type Target struct {
	Namespace, Name, Field string
	Edge                   *Edge
}

// Accepted is a mutation's answer: its event was made durable under EventID; Projected says it was also
// projected (or quarantined) before the answer, so the change is visible (false: accepted, not yet visible).
type Accepted struct {
	EventID   string
	Projected bool
}

// SetTags sets tags on the dataset (field "") or one of its fields: a tag of the same key there is replaced.
func (s *Service) SetTags(ctx context.Context, ns, name, field string, tags []Tag, reason string) (Accepted, error) {
	return s.tagMutation(ctx, "setTags", ns, name, field, tags, reason, true)
}

// RemoveTags removes tags from the dataset (field "") or one of its fields; a tag without a value removes the key
// whatever its value. A tag not in force there is BAD_REQUEST.
func (s *Service) RemoveTags(ctx context.Context, ns, name, field string, tags []Tag, reason string) (Accepted, error) {
	return s.tagMutation(ctx, "removeTags", ns, name, field, tags, reason, false)
}

// Block blocks propagation through a field (or only the edge into it), with the caller as who and reason as why;
// a block already in force on the same target is BAD_REQUEST (unblock it first).
func (s *Service) Block(ctx context.Context, t Target, reason string) (Accepted, error) {
	return s.blockMutation(ctx, "block", t, reason, true)
}

// Unblock removes the block on the target; none in force there is BAD_REQUEST.
func (s *Service) Unblock(ctx context.Context, t Target, reason string) (Accepted, error) {
	return s.blockMutation(ctx, "unblock", t, reason, false)
}

// call is one mutation being decided: the operation, the caller, the dataset once found, the audit trail.
type call struct {
	op     string
	who    authz.Principal
	trail  authz.AuditTrail
	asked  authz.Candidate // the dataset as named by the caller (audited on a refusal before it is found)
	row    graph.DatasetRow
	nowMs  int64
	reason string
}

func (s *Service) begin(ctx context.Context, op, ns, name, reason string) *call {
	c := &call{op: op, who: authz.FromContext(ctx), trail: authz.RequestAuditFrom(ctx),
		asked: authz.Candidate{Kind: authz.KindDataset, Namespace: ns, Name: name}, nowMs: s.clock().UnixMilli(), reason: reason}
	if c.trail != nil {
		c.trail.Audited(fmt.Sprintf("%s(namespace: %q, name: %q)", op, ns, name))
	}
	return c
}

// deny notes a refusal on the audit trail and returns err.
func (c *call) deny(err error) error {
	if c.trail != nil {
		cand := c.asked
		if c.row.Key != "" {
			cand = authz.Candidate{Kind: authz.KindDataset, Key: c.row.Key, Namespace: c.row.CurrentNS, Name: c.row.CurrentName}
		}
		msg := err.Error()
		if de, ok := errors.AsType[*api.Error](err); ok {
			msg = de.Message
		}
		c.trail.Denied(cand, c.op+": "+msg)
	}
	return err
}

// accepted notes the accepted event on the audit trail.
func (c *call) accepted(id string) {
	if c.trail == nil {
		return
	}
	note := "event " + id
	if c.reason != "" {
		note += ", reason: " + c.reason
	}
	c.trail.Noted(c.op + " " + c.row.CurrentNS + " " + c.row.CurrentName + ": " + note)
}

func (s *Service) tagMutation(ctx context.Context, op, ns, name, field string, tags []Tag, reason string, set bool) (Accepted, error) {
	c := s.begin(ctx, op, ns, name, reason)
	if err := checkTagInput(tags, reason); err != nil {
		return Accepted{}, c.deny(err)
	}
	if err := s.find(ctx, c, ns, name, field); err != nil {
		return Accepted{}, c.deny(err)
	}
	if err := s.require(ctx, c, authz.PrivManageTags, RuleManageTags, ""); err != nil {
		return Accepted{}, c.deny(err)
	}
	settings := s.policy.Settings()
	for _, t := range tags {
		if settings.Sensitive("", []string{tagName(olevent.Tag{Key: t.Key, Value: t.Value, Field: field})}) {
			if err := s.require(ctx, c, authz.PrivViewSensitive, RuleViewSensitive, " to set or remove a sensitive tag"); err != nil {
				return Accepted{}, c.deny(err)
			}
			break
		}
	}
	return s.leased(ctx, c, ns, name, field, func() (change, error) {
		cur, err := s.currentTags(ctx, c)
		if err != nil {
			return change{}, err
		}
		var next []olevent.Tag
		if set {
			next = setTags(cur, field, tags, SourcePrefix+c.who.Subject)
		} else if next, err = removeTags(cur, field, tags); err != nil {
			return change{}, c.deny(err)
		}
		facet := map[string]any{"_producer": Producer, "_schemaURL": tagsFacetURL, "tags": wireTags(next)}
		return change{key: olevent.FacetTags, facet: facet, latest: tagTimes(c.row.TagHistory)}, nil
	})
}

func (s *Service) blockMutation(ctx context.Context, op string, t Target, reason string, add bool) (Accepted, error) {
	c := s.begin(ctx, op, t.Namespace, t.Name, reason)
	if err := checkBlockInput(t, reason, add); err != nil {
		return Accepted{}, c.deny(err)
	}
	if err := s.find(ctx, c, t.Namespace, t.Name, t.Field); err != nil {
		return Accepted{}, c.deny(err)
	}
	if err := s.require(ctx, c, authz.PrivManageTags, RuleManageTags, ""); err != nil {
		return Accepted{}, c.deny(err)
	}
	edge, err := s.findEdge(ctx, c, t.Edge)
	if err != nil {
		return Accepted{}, c.deny(err)
	}
	return s.leased(ctx, c, t.Namespace, t.Name, t.Field, func() (change, error) {
		cur := c.row.BlocksAt(max(c.nowMs, blockTimes(c.row.BlockHistory)))
		next, err := nextBlocks(cur, graph.BlockInterval{Field: t.Field, Edge: edge, By: c.who.Subject, Reason: reason}, add)
		if err != nil {
			return change{}, c.deny(err)
		}
		facet := map[string]any{"_producer": Producer, "_schemaURL": blockFacetURL, "blocks": wireBlocks(next)}
		return change{key: olevent.FacetGovernanceBlock, facet: facet, latest: blockTimes(c.row.BlockHistory)}, nil
	})
}

// change is the one facet a mutation's event carries (key, the facet), and the latest event time of the facets of
// its kind in force (the event follows it).
type change struct {
	key    string
	facet  map[string]any
	latest int64
}

// leased computes the change (from the state in force) holding the dataset's lease, on the dataset read again
// under it, and sends it. Before the send the lease is made pending on the event (its key, so any process can tell
// when it is projected); once the event is durable the lease is held for it in Redis (PendingTTL) and released
// when it is projected or quarantined: by this mutation if within ProjectionWait, else by the next mutation,
// which takes it over then (ADR 0088). A lease not had within LeaseWait, lost before the send, or Redis failing,
// is UNAVAILABLE and nothing is sent.
func (s *Service) leased(ctx context.Context, c *call, ns, name, field string, compute func() (change, error)) (Accepted, error) {
	id := uuid.NewString()
	if s.leases == nil {
		ch, err := compute()
		if err != nil {
			return Accepted{}, err
		}
		return s.submit(ctx, c, id, ch)
	}
	key := c.row.Key
	l, err := s.leases.Acquire(ctx, leaseKeyPrefix+key, s.settled)
	switch {
	case errors.Is(err, lease.ErrBusy):
		return Accepted{}, c.deny(&api.Error{Class: api.ErrUnavailable, Cause: err, Message: fmt.Sprintf(
			"another governance mutation on %s %s is still being projected (waited %s); nothing was changed; retry",
			c.row.CurrentNS, c.row.CurrentName, LeaseWait)})
	case err != nil:
		return Accepted{}, c.deny(leaseUnavailable(err))
	}
	held := false // the lease is left to the event: pending in Redis, not released here
	defer func() {
		if !held {
			_ = l.Release(context.WithoutCancel(ctx)) // unreleased, it lapses at LeaseTTL
		}
	}()
	c.nowMs = s.clock().UnixMilli() // the state read under the lease, at the instant it is had
	if err := s.find(ctx, c, ns, name, field); err != nil {
		return Accepted{}, c.deny(err)
	}
	if c.row.Key != key { // renamed over by another dataset while waiting: its checks were not made
		return Accepted{}, c.deny(&api.Error{Class: api.ErrUnavailable,
			Message: fmt.Sprintf("%s %s changed while the mutation waited; nothing was changed; retry", ns, name)})
	}
	ch, err := compute()
	if err != nil {
		return Accepted{}, err
	}
	eventKey := graph.EventKey(c.who.Subject, id)
	if err := l.Pend(ctx, eventKey); err != nil { // still ours, now naming the event it waits for
		return Accepted{}, c.deny(leaseUnavailable(err))
	}
	a, err := s.submit(ctx, c, id, ch)
	if err != nil {
		return a, err
	}
	held = true
	_ = l.Hold(context.WithoutCancel(ctx), PendingTTL) // a lease lost here is counted (lost); the event is durable
	if a.Projected = s.projected(ctx, eventKey); a.Projected {
		held = false
	} else {
		l.Leave()
	}
	return a, nil
}

// leaseUnavailable is the answer to a lease Redis failed for, or one lost before the event was sent.
func leaseUnavailable(err error) error {
	if errors.Is(err, lease.ErrLost) {
		return &api.Error{Class: api.ErrUnavailable, Cause: err,
			Message: "the dataset's governance lease lapsed before the event was sent; nothing was changed; retry"}
	}
	return &api.Error{Class: api.ErrUnavailable, Cause: err,
		Message: "the governance mutations' per-dataset lease (Redis) is unavailable; nothing was changed; retry later"}
}

// settled says whether the event a pending lease names (its stored key) is projected or quarantined.
func (s *Service) settled(ctx context.Context, eventKey string) (bool, error) {
	row, err := s.events.EventStatus(ctx, eventKey)
	return err == nil && (row.Projected || row.Quarantined), err
}

// projected waits (at most s.wait) for the event to be projected or quarantined (a quarantined event changed
// nothing): true once it is, false when the wait passed or the status could not be read.
func (s *Service) projected(ctx context.Context, eventKey string) bool {
	deadline := time.Now().Add(s.wait)
	for {
		if ok, _ := s.settled(ctx, eventKey); ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(projectionPoll):
		}
	}
}

// find resolves the dataset (and the field, when one is named) as the caller may see it now.
func (s *Service) find(ctx context.Context, c *call, ns, name, field string) error {
	var row graph.DatasetRow
	var err error
	if field == "" {
		row, err = s.cat.FindDataset(ctx, ns, name, c.nowMs)
	} else {
		_, row, err = s.cat.FindField(ctx, api.FieldRef{Namespace: ns, Name: name, Field: field}, c.nowMs)
	}
	if err == nil {
		c.row = row // only a dataset the caller may see: a refused lookup keeps nothing of it
	}
	if field != "" {
		return notFound(err, "field", "no such field of a dataset")
	}
	return notFound(err, "dataset", "no such dataset")
}

// findEdge resolves a block's edge: the job and the upstream field, both as the caller may see them (unknown and
// invisible the same NOT_FOUND), named canonically as the projector matches them.
func (s *Service) findEdge(ctx context.Context, c *call, e *Edge) (*graph.BlockEdge, error) {
	if e == nil {
		return nil, nil
	}
	j, err := s.cat.FindJob(ctx, e.JobNamespace, e.JobName)
	if err != nil {
		return nil, notFound(err, "target.edge.job", "no such job")
	}
	_, up, err := s.cat.FindField(ctx, e.From, c.nowMs)
	if err != nil {
		return nil, notFound(err, "target.edge.from", "no such field")
	}
	return &graph.BlockEdge{JobNamespace: j.Namespace, JobName: j.Name, JobKey: graph.JobKey(j.Namespace, j.Name),
		Namespace: up.CurrentNS, Name: up.CurrentName, Field: e.From.Field}, nil
}

// notFound gives a NOT_FOUND lookup the argument's fixed message: unknown and invisible are the same answer, and
// it repeats no name (the catalog's messages echo the name asked). Other errors are as they are.
func notFound(err error, arg, what string) error {
	if err == nil || !errors.Is(err, api.ErrNotFound) {
		return err
	}
	return api.NotFound("%s: not found (%s you may describe)", arg, what)
}

// require refuses unless the caller holds priv on the dataset (every identity it has now and had at the time).
func (s *Service) require(ctx context.Context, c *call, priv authz.Privilege, rule, why string) error {
	cands := permcheck.DatasetCandidates(c.row)
	checks := make([]authz.Check, len(cands))
	for i, cd := range cands {
		checks[i] = authz.Check{Priv: priv, Candidate: cd}
	}
	ok, err := s.policy.Check(ctx, c.who, checks)
	if err != nil {
		return fmt.Errorf("%w: %w", authz.ErrUnavailable, err)
	}
	if slices.Contains(ok, false) {
		return &api.Error{Class: api.ErrForbidden, Message: fmt.Sprintf("%s: %s on %s %s is required%s",
			rule, priv, c.row.CurrentNS, c.row.CurrentName, why)}
	}
	return nil
}

// currentTags are the dataset's tags in force now, each as its facet entry (key, value, field, source).
func (s *Service) currentTags(ctx context.Context, c *call) ([]olevent.Tag, error) {
	at := max(c.nowMs, tagTimes(c.row.TagHistory)) // the latest list, which the mutation's event follows
	names := c.row.TagsAt(at)
	if len(names) == 0 {
		return nil, nil
	}
	raw, err := s.cat.DatasetFacet(ctx, c.row.Key, olevent.FacetTags)
	if err != nil {
		return nil, err
	}
	return tagsInForce(names, c.row, raw, at), nil
}

// submit sends the one DatasetEvent carrying the change on the dataset under the event id id, at the mutation's
// time or just after the latest facet of its kind (so the mutation is the latest, whatever a producer's clock
// said), and answers once it is durable.
func (s *Service) submit(ctx context.Context, c *call, id string, ch change) (Accepted, error) {
	at := max(c.nowMs, ch.latest+1)
	ev := map[string]any{"eventId": id, "eventTime": time.UnixMilli(at).UTC().Format(time.RFC3339Nano), "producer": Producer,
		"schemaURL": datasetEventSchema,
		"dataset":   map[string]any{"namespace": c.row.CurrentNS, "name": c.row.CurrentName, "facets": map[string]any{ch.key: ch.facet}}}
	b, err := json.Marshal(ev)
	if err != nil {
		return Accepted{}, err
	}
	sub, err := s.sub.SubmitWith(ctx, [][]byte{b}, guard{ns: c.row.CurrentNS, name: c.row.CurrentName})
	if errors.Is(err, gateway.ErrUnavailable) {
		return Accepted{}, &api.Error{Class: api.ErrUnavailable, Message: "the event could not be made durable; nothing was changed; retry later", Cause: err}
	}
	if err != nil {
		return Accepted{}, err
	}
	if !sub.Accepted || len(sub.Results) != 1 {
		msg := "the event was refused"
		if len(sub.Results) == 1 && sub.Results[0].Error != nil {
			e := sub.Results[0].Error
			msg = fmt.Sprintf("the event was refused: %s (%s): %s", e.Field, e.Rule, e.Message)
		}
		return Accepted{}, c.deny(api.BadRequest("%s", msg))
	}
	if got := sub.Results[0].EventID; got != id { // the id the lease waits for must be the event's
		return Accepted{}, fmt.Errorf("governance mutation: the gateway gave the event id %q, not the one sent (%q)", got, id)
	}
	c.accepted(id)
	return Accepted{EventID: id}, nil
}

// guard is the write check of one mutation's event: a DatasetEvent on the dataset the mutation checked
// MANAGE_TAGS on, which it owns; anything else is refused.
type guard struct{ ns, name string }

func (g guard) Check(_ context.Context, _ authz.Principal, ev *olevent.Event) (ownership.Set, *producecheck.Denial) {
	if ev.Job != nil || len(ev.Inputs) > 0 || len(ev.Outputs) > 0 || ev.Dataset == nil ||
		ev.Dataset.Namespace != g.ns || ev.Dataset.Name != g.name {
		return ownership.Of(nil), &producecheck.Denial{Field: "dataset", Namespace: g.ns}
	}
	return ownership.Of([]string{g.ns}), nil
}

func checkTagInput(tags []Tag, reason string) error {
	if len(tags) == 0 {
		return api.BadRequest("tags: at least one tag is required")
	}
	if len(tags) > MaxTagsPerCall {
		return api.BadRequest("tags: %d tags; at most %d per call", len(tags), MaxTagsPerCall)
	}
	for i, t := range tags {
		switch {
		case strings.TrimSpace(t.Key) == "":
			return api.BadRequest("tags[%d].key: must not be empty", i)
		case len(t.Key) > MaxTagBytes || len(t.Value) > MaxTagBytes:
			return api.BadRequest("tags[%d]: key and value are at most %d bytes each", i, MaxTagBytes)
		case !utf8.ValidString(t.Key) || !utf8.ValidString(t.Value):
			return api.BadRequest("tags[%d]: must be valid UTF-8", i)
		}
	}
	return checkReason(reason, false)
}

func checkBlockInput(t Target, reason string, add bool) error {
	if strings.TrimSpace(t.Field) == "" {
		return api.BadRequest("target.field: must not be empty")
	}
	return checkReason(reason, add)
}

func checkReason(reason string, required bool) error {
	switch {
	case required && strings.TrimSpace(reason) == "":
		return api.BadRequest("reason: a block needs a reason")
	case len(reason) > MaxReasonBytes:
		return api.BadRequest("reason: %d bytes; at most %d", len(reason), MaxReasonBytes)
	case !utf8.ValidString(reason):
		return api.BadRequest("reason: must be valid UTF-8")
	}
	return nil
}
