package manage

import (
	"context"
	"errors"
	"fmt"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
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

// AuthorizeAuditRead checks that caller may read the audit stream (see above) under the grants in force now,
// and audits the read: a refusal as a DENY record (and ErrForbidden), an allowed read as an ALLOW record whose
// reason describes the filter. An allowed read is refused when its record cannot be written: nobody reads the
// stream unaudited.
func (m *Manager) AuthorizeAuditRead(ctx context.Context, caller authz.Principal, requestID, filter string) error {
	if err := m.policy.Refresh(ctx); err != nil {
		return err
	}
	rec := m.record(caller, OpReadAudit, audit.DecisionAllow, filter, nil, 0)
	rec.RequestID = requestID
	if !m.policy.SeesEverything(ctx, caller) {
		rec.Decision, rec.Reason = audit.DecisionDeny, reasonAuditReadDenied
		return errors.Join(fmt.Errorf("%w: %s", authz.ErrForbidden, reasonAuditReadDenied), m.audit.Audit(ctx, rec))
	}
	if err := m.audit.Audit(ctx, rec); err != nil {
		return fmt.Errorf("%w: audit the audit-stream read: %w", authz.ErrUnavailable, err)
	}
	return nil
}
