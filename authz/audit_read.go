package authz

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Reading the audit stream. The stream names every sensitive node any principal touched and every node anyone
// was refused, so reading it is reserved to principals who may see everything anyway: MANAGE_GRANTS on ROOT
// (which implies every privilege everywhere) and no DENY grant anywhere in their roles (a deny means there is
// something they may not see, which a record could name). For them the stream discloses nothing new; for anyone
// else it would be a side channel. Every read is audited, allowed or refused.

// OpReadAudit is the operation of the audit records that audit-stream reads write.
const OpReadAudit = "auditRecords"

// reasonAuditReadDenied is the reason of a refused audit-stream read.
const reasonAuditReadDenied = "reading the audit stream needs MANAGE_GRANTS on ROOT and no DENY grant"

// AuditQuery selects a page of the audit stream, newest first.
type AuditQuery struct {
	// Limit is the most records the page returns (1..MaxAuditPage).
	Limit int
	// Before holds, per partition, the offset the page reads below (exclusive): a previous page's Next. Nil
	// starts at the current end of every partition; a partition missing from a non-nil Before (created after the
	// first page) is not read.
	Before map[int32]int64
	// Since keeps records whose time is at or after it (zero: no lower bound).
	Since time.Time
	// Principal keeps records of this subject only (empty: all).
	Principal string
	// Decision keeps records with this decision only (empty: both).
	Decision Decision
}

// Matches reports whether a record passes the query's filters.
func (q AuditQuery) Matches(r AuditRecord) bool {
	return (q.Since.IsZero() || !r.Time.Before(q.Since)) && (q.Principal == "" || r.Principal == q.Principal) &&
		(q.Decision == "" || r.Decision == q.Decision)
}

// AuditEntry is one record with its position in the topic.
type AuditEntry struct {
	AuditRecord
	Partition int32
	Offset    int64
}

// AuditPage is one page of the audit stream.
type AuditPage struct {
	Entries []AuditEntry
	// Next is the Before of the next page.
	Next map[int32]int64
	// More is true when records older than this page are left to read (they may turn out not to match).
	More bool
	// Truncated is true when the scan budget (MaxAuditScan records) or the deadline (AuditReadTimeout) ended
	// the page before it was full; Next continues where the scan stopped.
	Truncated bool
	// Scanned counts the records read (matching or not); Undecodable those that were not audit records.
	Scanned, Undecodable int
}

// Limits of one audit-stream read.
const (
	// MaxAuditPage bounds the records one page returns.
	MaxAuditPage = 500
	// MaxAuditScan bounds the records one read scans, matching or not.
	MaxAuditScan = 20_000
	// AuditReadTimeout is the deadline of one read.
	AuditReadTimeout = 10 * time.Second
)

// AuthorizeAuditRead checks that caller may read the audit stream (see above) under the grants in force now,
// and audits the read: a refusal as a DENY record (and ErrForbidden), an allowed read as an ALLOW record whose
// reason describes the filter. An allowed read is refused when its record cannot be written: nobody reads the
// stream unaudited.
func (m *Manager) AuthorizeAuditRead(ctx context.Context, caller Principal, requestID, filter string) error {
	if err := m.policy.Refresh(ctx); err != nil {
		return err
	}
	rec := m.record(caller, OpReadAudit, DecisionAllow, filter, nil, 0)
	rec.RequestID = requestID
	if !m.policy.seesEverything(ctx, caller) {
		rec.Decision, rec.Reason = DecisionDeny, reasonAuditReadDenied
		return errors.Join(fmt.Errorf("%w: %s", ErrForbidden, reasonAuditReadDenied), m.audit.Audit(ctx, rec))
	}
	if err := m.audit.Audit(ctx, rec); err != nil {
		return fmt.Errorf("%w: audit the audit-stream read: %w", ErrUnavailable, err)
	}
	return nil
}

// seesEverything reports whether p holds MANAGE_GRANTS on ROOT with no DENY grant anywhere.
func (g *GrantPolicy) seesEverything(ctx context.Context, p Principal) bool {
	ev, claimed := g.cur.Load(), ClaimedRoles(ctx, p)
	return ev.CanOn(p, claimed, PrivManageGrants, Root()) && ev.viewOf(p, claimed).anyDeny == 0
}

// RequestID returns the id of the request being audited.
func (a *RequestAudit) RequestID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.RequestID
}
