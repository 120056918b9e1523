package authz

import "context"

// AuditTrail is what a request notes for its audit record while it runs (audit.RequestAudit implements it): the
// sensitive nodes it returned or expanded and the nodes it was refused. The handler that owns the request puts one
// in the context and writes the record when the request ends.
type AuditTrail interface {
	// Touched records that the request returned or expanded a sensitive node.
	Touched(c Candidate)
	// Denied records that the request was refused because of c (a root it may not see, a run of a hidden job).
	Denied(c Candidate, reason string)
	// RequestID is the id of the request being audited.
	RequestID() string
	// Audited says the request is recorded whatever it touches, under the operation named (every piiFlow call).
	Audited(operation string)
	// Noted adds a note to the record's reason without deciding anything (a governance mutation's event id and
	// reason, ADR 0067).
	Noted(note string)
}

type requestAuditKey struct{}

// WithRequestAudit returns a context carrying the request's audit trail.
func WithRequestAudit(ctx context.Context, a AuditTrail) context.Context {
	return context.WithValue(ctx, requestAuditKey{}, a)
}

// RequestAuditFrom returns the request's audit trail, or nil when the request is not audited.
func RequestAuditFrom(ctx context.Context) AuditTrail {
	a, _ := ctx.Value(requestAuditKey{}).(AuditTrail)
	return a
}
