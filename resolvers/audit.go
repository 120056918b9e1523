package resolvers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/resolvers/model"
)

// AuditReader reads pages of the audit stream, newest first (auditkafka.KafkaAuditReader).
type AuditReader interface {
	ReadAudit(ctx context.Context, q audit.AuditQuery) (audit.AuditPage, error)
}

// auditGate decides who may read the audit stream and audits every read (manage.Manager).
type auditGate interface {
	AuthorizeAuditRead(ctx context.Context, caller authz.Principal, requestID, filter string) error
}

var _ auditGate = (*manage.Manager)(nil)

// defaultAuditPage is the page size when `first` is omitted.
const defaultAuditPage = 100

// errNoAudit answers auditRecords on a server wired without a Manager or an AuditReader.
var errNoAudit = fmt.Errorf("%w: reading the audit stream is not enabled", authz.ErrForbidden)

// auditArgs are the arguments of auditRecords.
type auditArgs struct {
	first     *int
	after     *string
	since     *time.Time
	principal *string
	decision  *model.AuditDecision
}

// auditRecords authorizes (and audits) the read, then reads one page.
func (r *Resolver) auditRecords(ctx context.Context, a auditArgs) (*model.AuditConnection, error) {
	if r.auditGate == nil || r.auditReader == nil {
		return nil, errNoAudit
	}
	caller := authz.FromContext(ctx)
	if err := r.auditGate.AuthorizeAuditRead(ctx, caller, requestIDOf(ctx), a.describe()); err != nil {
		return nil, err
	}
	q, err := a.query(caller)
	if err != nil {
		return nil, err
	}
	page, err := r.auditReader.ReadAudit(ctx, q)
	if errors.Is(err, authz.ErrInvalid) {
		return nil, auditBadRequest(err.Error())
	}
	if err != nil {
		return nil, &api.Error{Class: api.ErrUnavailable, Message: "the audit stream is unavailable, retry later", Cause: err}
	}
	return connectionOf(page, a.binding(caller)), nil
}

// requestIDOf is the id of the request being audited ("" when the server audits nothing).
func requestIDOf(ctx context.Context) string {
	if ra := authz.RequestAuditFrom(ctx); ra != nil {
		return ra.RequestID()
	}
	return ""
}

func auditBadRequest(msg string) error {
	return &api.Error{Class: api.ErrBadRequest, Message: msg}
}

// query validates the arguments and maps them to the reader's query.
func (a auditArgs) query(caller authz.Principal) (audit.AuditQuery, error) {
	q := audit.AuditQuery{Limit: defaultAuditPage, Principal: deref(a.principal)}
	if a.first != nil {
		q.Limit = *a.first
	}
	if q.Limit < 1 || q.Limit > audit.MaxAuditPage {
		return q, auditBadRequest(fmt.Sprintf("first must be between 1 and %d", audit.MaxAuditPage))
	}
	if a.since != nil {
		q.Since = a.since.UTC()
	}
	if a.decision != nil {
		q.Decision = audit.Decision(*a.decision)
	}
	if a.after != nil {
		before, err := decodeAuditCursor(*a.after, a.binding(caller))
		if err != nil {
			return q, err
		}
		q.Before = before
	}
	return q, nil
}

// describe is the filter as the read's audit record states it.
func (a auditArgs) describe() string {
	parts := []string{"read audit records"}
	if a.since != nil {
		parts = append(parts, "since="+a.since.UTC().Format(time.RFC3339Nano))
	}
	if a.principal != nil {
		parts = append(parts, "principal="+strconv.Quote(*a.principal))
	}
	if a.decision != nil {
		parts = append(parts, "decision="+string(*a.decision))
	}
	if a.after != nil {
		parts = append(parts, "continued")
	}
	return strings.Join(parts, "; ")
}

// binding is what a cursor is bound to: the caller and the filters.
func (a auditArgs) binding(caller authz.Principal) string {
	since := ""
	if a.since != nil {
		since = a.since.UTC().Format(time.RFC3339Nano)
	}
	dec := ""
	if a.decision != nil {
		dec = string(*a.decision)
	}
	return strings.Join([]string{caller.Subject, since, deref(a.principal), dec}, "\x1f")
}
