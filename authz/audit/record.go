// Package audit is the append-only audit stream's record model and writers: one record per request that touched
// sensitive nodes or was denied (RequestAudit accumulates it while the request runs), one per grant change; the
// asynchronous writer that queues request records so an answer never waits for the stream; and the query and page
// types of reading it back. The Kafka writer and reader are in authz/auditkafka.
package audit

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// Decision is the outcome an audit record reports.
type Decision string

// Decisions.
const (
	DecisionAllow Decision = "ALLOW"
	DecisionDeny  Decision = "DENY"
)

// maxAuditNodes bounds the nodes one record lists; the rest are counted in NodesOmitted.
const maxAuditNodes = 1000

// AuditNode is one node a request touched or was denied.
type AuditNode struct {
	Kind      authz.NodeKind `json:"kind"`
	Key       string         `json:"key,omitempty"`
	Namespace string         `json:"namespace,omitempty"`
	Name      string         `json:"name,omitempty"`
	Sensitive bool           `json:"sensitive,omitempty"`
	Denied    bool           `json:"denied,omitempty"`
}

// AuditRecord is one record of the append-only audit stream: one per request that touched sensitive nodes or
// was denied, and one per grant change.
type AuditRecord struct {
	Time          time.Time      `json:"time"`
	RequestID     string         `json:"requestId,omitempty"`
	Principal     string         `json:"principal"`
	PrincipalKind string         `json:"principalKind,omitempty"`
	Operation     string         `json:"operation"`
	Decision      Decision       `json:"decision"`
	Reason        string         `json:"reason,omitempty"`
	Nodes         []AuditNode    `json:"nodes,omitempty"`
	NodesOmitted  int            `json:"nodesOmitted,omitempty"`
	Changes       []grant.Change `json:"changes,omitempty"` // grant changes
	Epoch         int64          `json:"epoch,omitempty"`   // grant epoch after a change
}

// Auditor writes audit records durably.
type Auditor interface {
	Audit(ctx context.Context, r AuditRecord) error
}

// RequestAudit accumulates what one request touched that must be audited (sensitive nodes, denials) and
// writes at most one record when the request ends. Safe for concurrent use.
type RequestAudit struct {
	mu      sync.Mutex
	rec     AuditRecord
	seen    map[string]int // kind|key -> index in rec.Nodes
	clock   func() time.Time
	denied  bool
	always  bool // recorded whatever it touched (Audited)
	reasons []string
}

// NewRequestAudit starts the audit of one request.
func NewRequestAudit(p authz.Principal, operation, requestID string, clock func() time.Time) *RequestAudit {
	return &RequestAudit{rec: AuditRecord{Principal: p.Subject, PrincipalKind: p.Kind, Operation: operation,
		RequestID: requestID}, seen: map[string]int{}, clock: clock}
}

// Touched records that the request returned or expanded a sensitive node.
func (a *RequestAudit) Touched(c authz.Candidate) { a.add(c, false) }

// Denied records that the request was refused because of c (a root it may not see, a produce it may not do).
func (a *RequestAudit) Denied(c authz.Candidate, reason string) {
	a.add(c, true)
	a.mu.Lock()
	defer a.mu.Unlock()
	if reason != "" && len(a.reasons) < maxAuditReasons {
		a.reasons = append(a.reasons, reason)
	}
}

// Noted adds a note to the record's reasons (bounded like them) without making it a denial.
func (a *RequestAudit) Noted(note string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if note != "" && len(a.reasons) < maxAuditReasons {
		a.reasons = append(a.reasons, note)
	}
}

// maxAuditReasons bounds the distinct denial reasons one record keeps.
const maxAuditReasons = 8

func (a *RequestAudit) add(c authz.Candidate, denied bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.denied = a.denied || denied
	k := string(c.Kind) + "|" + c.Key + "|" + c.Namespace + "|" + c.Name
	if i, ok := a.seen[k]; ok {
		a.rec.Nodes[i].Denied = a.rec.Nodes[i].Denied || denied
		return
	}
	if len(a.rec.Nodes) >= maxAuditNodes {
		a.rec.NodesOmitted++
		return
	}
	a.seen[k] = len(a.rec.Nodes)
	a.rec.Nodes = append(a.rec.Nodes, AuditNode{Kind: c.Kind, Key: c.Key, Namespace: c.Namespace, Name: c.Name,
		Sensitive: !denied, Denied: denied})
}

// Audited says the request is recorded whatever it touches, under the operation named (appended to the
// request's, once each: "graphql piiFlow(tag: pii)").
func (a *RequestAudit) Audited(operation string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.always = true
	if operation != "" && !strings.Contains(a.rec.Operation, operation) {
		a.rec.Operation += " " + operation
	}
}

// Empty reports whether nothing auditable happened.
func (a *RequestAudit) Empty() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.always && len(a.rec.Nodes) == 0 && a.rec.NodesOmitted == 0
}

// Record returns the record Flush would write.
func (a *RequestAudit) Record() AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rec
	r.Nodes = append([]AuditNode(nil), a.rec.Nodes...)
	r.Time = a.clock().UTC()
	r.Decision = DecisionAllow
	if a.denied {
		r.Decision = DecisionDeny
	}
	r.Reason = joinReasons(a.reasons)
	return r
}

// Flush writes one record if the request touched sensitive nodes or was denied; otherwise nothing.
func (a *RequestAudit) Flush(ctx context.Context, to Auditor) error {
	if a.Empty() {
		return nil
	}
	return to.Audit(ctx, a.Record())
}

func joinReasons(rs []string) string {
	var out strings.Builder
	for i, r := range rs {
		if i > 0 {
			out.WriteString("; ")
		}
		out.WriteString(r)
	}
	return out.String()
}

// RequestID returns the id of the request being audited.
func (a *RequestAudit) RequestID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.RequestID
}

var _ authz.AuditTrail = (*RequestAudit)(nil)
