package resolvers

import (
	"strconv"

	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/resolvers/model"
)

// connectionOf maps a page of the audit stream to its GraphQL connection.
func connectionOf(p audit.AuditPage, binding string) *model.AuditConnection {
	out := &model.AuditConnection{Nodes: make([]*model.AuditRecord, 0, len(p.Entries)), HasNextPage: p.More,
		Truncated: p.Truncated, Scanned: p.Scanned, Undecodable: p.Undecodable}
	for _, e := range p.Entries {
		out.Nodes = append(out.Nodes, auditRecordOf(e))
	}
	if p.More {
		c := encodeAuditCursor(p.Next, binding)
		out.EndCursor = &c
	}
	return out
}

func auditRecordOf(e audit.AuditEntry) *model.AuditRecord {
	r := &model.AuditRecord{ID: "a" + strconv.FormatInt(int64(e.Partition), 10) + ":" + strconv.FormatInt(e.Offset, 10),
		Time: e.Time, RequestID: optString(e.RequestID), Principal: e.Principal, PrincipalKind: optString(e.PrincipalKind),
		Operation: e.Operation, Decision: model.AuditDecision(e.Decision), Reason: optString(e.Reason),
		Nodes: make([]*model.AuditNode, 0, len(e.Nodes)), NodesOmitted: e.NodesOmitted,
		Changes: make([]*model.AuditGrantChange, 0, len(e.Changes))}
	if e.Epoch != 0 {
		ep := int(e.Epoch)
		r.Epoch = &ep
	}
	for _, n := range e.Nodes {
		r.Nodes = append(r.Nodes, &model.AuditNode{Kind: string(n.Kind), Key: optString(n.Key),
			Namespace: optString(n.Namespace), Name: optString(n.Name), Sensitive: n.Sensitive, Denied: n.Denied})
	}
	for _, c := range e.Changes {
		r.Changes = append(r.Changes, auditChangeOf(c))
	}
	return r
}

func auditChangeOf(c grant.Change) *model.AuditGrantChange {
	out := &model.AuditGrantChange{Op: string(c.Op)}
	if c.Role != nil {
		out.Role = &model.AuditRole{Name: c.Role.Name, Description: optString(c.Role.Description),
			Source: optString(c.Role.Source)}
	}
	if g := c.Grant; g != nil {
		out.Grant = &model.AuditGrant{Role: g.Role, Privilege: string(g.Privilege), Effect: string(g.Effect),
			Source: optString(g.Source), On: &model.AuditSecurable{Kind: string(g.On.Kind),
				Environment: optString(g.On.Environment), Namespace: optString(g.On.Namespace), Name: optString(g.On.Name)}}
	}
	if b := c.Binding; b != nil {
		out.Binding = &model.AuditBinding{Subject: b.Subject, Role: b.Role, Source: optString(b.Source)}
	}
	return out
}

// optString is nil for the empty string.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
