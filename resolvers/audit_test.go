package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/auditkafka"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
)

// auditWorld is a GraphQL server whose audit stream is a real, per-test Kafka topic, written by the real
// KafkaAuditor and read by the real KafkaAuditReader.
type auditWorld struct {
	t                                    *testing.T
	srv                                  *httptest.Server
	mgr                                  *manage.Manager
	aud                                  *auditkafka.KafkaAuditor
	ns                                   string
	admin, denyAdmin, steward, bystander string
}

func newAuditWorld(t *testing.T) *auditWorld {
	t.Helper()
	store, kc := testenv.Store(t), testenv.KafkaConfig(t)
	topic := "t." + testenv.Token(4) + ".audit"
	aud, err := auditkafka.NewKafkaAuditor(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = aud.Close() })
	reader, err := auditkafka.NewKafkaAuditReader(kc, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reader.Close() })
	ns := testenv.Namespace(t)
	w := &auditWorld{t: t, aud: aud, ns: ns, admin: ns + "-admin", denyAdmin: ns + "-deny-admin",
		steward: ns + "-steward", bystander: ns + "-bystander"}
	grants := grantstore.NewGrantStore(store, time.Now)
	w.setupGrants(grants)
	pol, err := grantpolicy.NewGrantPolicy(t.Context(), grants, grantpolicy.PolicyOptions{Names: grantstore.GraphNames{Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	w.mgr = manage.NewManager(grants, pol, aud, nil, time.Now)
	w.srv = serveAs(t, testDeps{Store: store, Lineage: lineage.Config{CursorKey: testCursorKey}, Policy: pol,
		Auditor: aud, Manager: w.mgr, AuditReader: reader}, "")
	return w
}

// setupGrants: admin manages ROOT; denyAdmin too but is denied DESCRIBE on one prefix; steward manages one
// namespace only.
func (w *auditWorld) setupGrants(grants *grantstore.GrantStore) {
	role := func(n string) string { return w.ns + "-" + n }
	var cs []grant.Change
	for _, r := range []string{"admin", "deny-admin", "steward"} {
		cs = append(cs, grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: role(r)}})
	}
	grantOf := func(r string, p authz.Privilege, e grant.Effect, on grant.Securable) grant.Change {
		return grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: role(r), Privilege: p, Effect: e, On: on}}
	}
	bind := func(s, r string) grant.Change {
		return grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: s, Role: role(r)}}
	}
	nsSec := grant.Securable{Kind: grant.SecNamespace, Namespace: w.ns}
	cs = append(cs, grantOf("admin", authz.PrivManageGrants, grant.Allow, grant.Root()),
		grantOf("deny-admin", authz.PrivManageGrants, grant.Allow, grant.Root()),
		grantOf("deny-admin", authz.PrivDescribe, grant.Deny, grant.Securable{Kind: grant.SecPrefix, Namespace: w.ns, Name: "hr"}),
		grantOf("steward", authz.PrivManageGrants, grant.Allow, nsSec),
		bind(w.admin, "admin"), bind(w.denyAdmin, "deny-admin"), bind(w.steward, "steward"))
	if _, err := grants.Apply(w.t.Context(), "audit-test", cs); err != nil {
		w.t.Fatalf("apply grants: %v", err)
	}
	w.t.Cleanup(func() {
		var del []grant.Change
		for _, r := range []string{"admin", "deny-admin", "steward", "viewers"} {
			del = append(del, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: role(r)}})
		}
		_, _ = grants.Apply(context.Background(), "audit-test-cleanup", del)
	})
}

type auditPage struct {
	AuditRecords struct {
		Nodes []struct {
			ID, Time, Principal, Operation, Decision string
			RequestID, PrincipalKind, Reason         *string
			Epoch                                    *int
			NodesOmitted                             int
			Nodes                                    []struct {
				Kind, Key, Namespace, Name string
				Sensitive, Denied          bool
			}
			Changes []struct {
				Op    string
				Role  *struct{ Name string }
				Grant *struct {
					Role, Privilege, Effect string
					On                      struct{ Kind, Namespace string }
				}
			}
		}
		EndCursor   *string
		HasNextPage bool
		Truncated   bool
		Scanned     int
	}
}

const auditQuery = `query($first: Int, $after: String, $since: Time, $principal: String, $decision: AuditDecision) {
  auditRecords(first: $first, after: $after, since: $since, principal: $principal, decision: $decision) {
    nodes { id time requestId principal principalKind operation decision reason epoch nodesOmitted
            nodes { kind key namespace name sensitive denied }
            changes { op role { name } grant { role privilege effect on { kind namespace } } } }
    endCursor hasNextPage truncated scanned
  }
}`

// read runs auditRecords as principal with the request id header set.
func (w *auditWorld) read(principal, requestID string, vars map[string]any) (auditPage, []gqlError) {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": auditQuery, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(principalHeader, principal)
	req.Header.Set(requestIDHeader, requestID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	var r gqlResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		w.t.Fatalf("decode: %v", err)
	}
	var out auditPage
	if len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, &out); err != nil {
			w.t.Fatalf("decode data: %v\n%s", err, r.Data)
		}
	}
	return out, r.Errors
}

func (w *auditWorld) mustRead(principal string, vars map[string]any) auditPage {
	w.t.Helper()
	p, errs := w.read(principal, "req-"+testenv.Token(4), vars)
	if len(errs) > 0 {
		w.t.Fatalf("auditRecords as %s: %+v", principal, errs)
	}
	return p
}

func oneError(t *testing.T, errs []gqlError, code string) {
	t.Helper()
	if len(errs) != 1 || errs[0].code() != code {
		t.Fatalf("errors %+v, want one %s", errs, code)
	}
}

// writeHistory writes, oldest first: a denied lineage request (with nodes) flushed by a RequestAudit, a role
// creation and a grant by the admin through the Manager, and a refused role creation by the steward.
func (w *auditWorld) writeHistory() {
	w.t.Helper()
	ctx := w.t.Context()
	ra := audit.NewRequestAudit(authz.Principal{Subject: w.bystander, Kind: "service"}, "graphql", "req-lineage", time.Now)
	ra.Denied(authz.Candidate{Kind: authz.KindDataset, Key: "ds-secret", Namespace: w.ns, Name: "hr.salaries"}, "root not visible")
	if err := ra.Flush(ctx, w.aud); err != nil {
		w.t.Fatal(err)
	}
	admin, steward := authz.Principal{Subject: w.admin, Kind: "user"}, authz.Principal{Subject: w.steward, Kind: "user"}
	if err := w.mgr.CreateRole(ctx, admin, grant.Role{Name: w.ns + "-viewers"}); err != nil {
		w.t.Fatal(err)
	}
	g := grant.Grant{Role: w.ns + "-viewers", Privilege: authz.PrivViewSQL, On: grant.Securable{Kind: grant.SecNamespace, Namespace: w.ns}}
	if err := w.mgr.Grant(ctx, admin, g); err != nil {
		w.t.Fatal(err)
	}
	if err := w.mgr.CreateRole(ctx, steward, grant.Role{Name: w.ns + "-nope"}); err == nil {
		w.t.Fatal("steward created a role without MANAGE_GRANTS on ROOT")
	}
}

func TestAuditRecordsPagesNewestFirst(t *testing.T) {
	w := newAuditWorld(t)
	w.writeHistory()
	// A non-admin is refused, and the refusal is the next record.
	_, errs := w.read(w.steward, "req-steward-read", map[string]any{})
	oneError(t, errs, guard.CodeForbidden)
	if errs[0].Message != forbiddenMessage {
		t.Errorf("message %q", errs[0].Message)
	}
	var got []string // operation/principal/decision, newest first
	var pages []auditPage
	vars := map[string]any{"first": 2}
	for range 4 {
		p := w.mustRead(w.admin, vars)
		pages = append(pages, p)
		for _, n := range p.AuditRecords.Nodes {
			got = append(got, n.Operation+"/"+strings.TrimPrefix(n.Principal, w.ns+"-")+"/"+n.Decision)
		}
		if !p.AuditRecords.HasNextPage {
			break
		}
		vars = map[string]any{"first": 2, "after": *p.AuditRecords.EndCursor}
	}
	want := []string{"auditRecords/admin/ALLOW", "auditRecords/steward/DENY", "createRole/steward/DENY",
		"grant/admin/ALLOW", "createRole/admin/ALLOW", "graphql/bystander/DENY"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("records newest first:\n got %v\nwant %v", got, want)
	}
	if len(pages) != 3 || pages[2].AuditRecords.EndCursor != nil || pages[0].AuditRecords.Truncated {
		t.Errorf("paging: %d pages, last cursor %v", len(pages), pages[len(pages)-1].AuditRecords.EndCursor)
	}
	checkHistoryFields(t, w, pages)
}

func checkHistoryFields(t *testing.T, w *auditWorld, pages []auditPage) {
	t.Helper()
	first, second, third := pages[0].AuditRecords.Nodes, pages[1].AuditRecords.Nodes, pages[2].AuditRecords.Nodes
	read := first[0]
	if read.Reason == nil || *read.Reason != "read audit records" || read.RequestID == nil || read.ID == "" {
		t.Errorf("admin read record: %+v", read)
	}
	deny := first[1]
	if deny.RequestID == nil || *deny.RequestID != "req-steward-read" || deny.Reason == nil ||
		!strings.Contains(*deny.Reason, "MANAGE_GRANTS on ROOT") || *deny.PrincipalKind != "user" {
		t.Errorf("refused read record: %+v", deny)
	}
	grant := second[1]
	if grant.Epoch == nil || len(grant.Changes) != 1 || grant.Changes[0].Op != "GRANT" || grant.Changes[0].Grant == nil ||
		grant.Changes[0].Grant.Privilege != "VIEW_SQL" || grant.Changes[0].Grant.On.Kind != "NAMESPACE" ||
		grant.Changes[0].Grant.On.Namespace != w.ns || grant.Changes[0].Grant.Effect != "ALLOW" {
		t.Errorf("grant record: %+v", grant)
	}
	lin := third[1]
	if lin.RequestID == nil || *lin.RequestID != "req-lineage" || len(lin.Nodes) != 1 || !lin.Nodes[0].Denied ||
		lin.Nodes[0].Name != "hr.salaries" || lin.Nodes[0].Namespace != w.ns || lin.Nodes[0].Kind != "DATASET" ||
		*lin.Reason != "root not visible" || *lin.PrincipalKind != "service" {
		t.Errorf("lineage denial record: %+v", lin)
	}
	for i := 1; i < len(first); i++ {
		if first[i].Time > first[i-1].Time {
			t.Errorf("page not newest first: %s after %s", first[i].Time, first[i-1].Time)
		}
	}
}

func TestAuditRecordsFilters(t *testing.T) {
	w := newAuditWorld(t)
	w.writeHistory()
	denied := w.mustRead(w.admin, map[string]any{"principal": w.steward, "decision": "DENY"}).AuditRecords
	if len(denied.Nodes) != 1 || denied.Nodes[0].Operation != "createRole" || denied.HasNextPage {
		t.Errorf("steward denials: %+v", denied)
	}
	since := time.Now().UTC()
	if _, errs := w.read(w.steward, "req-2", map[string]any{}); len(errs) == 0 {
		t.Fatal("steward read the audit stream")
	}
	recent := w.mustRead(w.admin, map[string]any{"since": since.Format(time.RFC3339Nano), "decision": "DENY"}).AuditRecords
	if len(recent.Nodes) != 1 || recent.Nodes[0].Operation != "auditRecords" || recent.Nodes[0].Principal != w.steward {
		t.Errorf("denials since %s: %+v", since, recent)
	}
	// A cursor is bound to its filters and to its caller.
	p := w.mustRead(w.admin, map[string]any{"first": 1})
	_, errs := w.read(w.admin, "req-3", map[string]any{"first": 1, "after": *p.AuditRecords.EndCursor, "decision": "ALLOW"})
	oneError(t, errs, guard.CodeBadRequest)
	_, errs = w.read(w.admin, "req-4", map[string]any{"first": 1, "after": "ac1.bm9wZQ"})
	oneError(t, errs, guard.CodeBadRequest)
	_, errs = w.read(w.admin, "req-5", map[string]any{"first": 501})
	oneError(t, errs, guard.CodeBadRequest)
}

func TestAuditRecordsForbiddenToAdminsWithADeny(t *testing.T) {
	w := newAuditWorld(t)
	for _, who := range []string{w.denyAdmin, w.steward, w.bystander} {
		_, errs := w.read(who, "req-"+who, map[string]any{"first": 5})
		oneError(t, errs, guard.CodeForbidden)
	}
	got := w.mustRead(w.admin, map[string]any{"decision": "DENY"}).AuditRecords.Nodes
	seen := map[string]bool{}
	for _, n := range got {
		if n.Operation == "auditRecords" && n.RequestID != nil && *n.RequestID == "req-"+n.Principal {
			seen[n.Principal] = true
		}
	}
	if len(seen) != 3 {
		t.Errorf("refused reads audited: %v (records %+v)", seen, got)
	}
}
