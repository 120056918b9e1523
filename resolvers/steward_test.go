package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/authz/grantstore"
	"github.com/headwater-data/headwater/authz/manage"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// stewardWorld (issue 13 item 6): admins manage ROOT; a steward manages one namespace; "team" holds grants only
// in that namespace; "wide" holds one grant there and one in another namespace; "empty" holds none.
type stewardWorld struct {
	t                 *testing.T
	fx                *lineagetest.Fixture
	grants            *grantstore.GrantStore
	audit             *memAudit
	srv               *httptest.Server
	ns, other         string
	admin, steward    string
	dataset           string
	admins, stewardsR string
}

func newStewardWorld(t *testing.T) *stewardWorld {
	t.Helper()
	store := testenv.Store(t)
	fx := lineagetest.New(t, store)
	w := &stewardWorld{t: t, fx: fx, grants: grantstore.NewGrantStore(store, time.Now), audit: &memAudit{}, ns: fx.NS,
		other: fx.NS + "-other", admin: fx.NS + "-admin", steward: fx.NS + "-steward", dataset: "orders"}
	w.admins, w.stewardsR = w.role("admins"), w.role("stewards")
	fx.Dataset(w.dataset)
	w.setupGrants()
	pol, err := grantpolicy.NewGrantPolicy(t.Context(), w.grants, grantpolicy.PolicyOptions{Names: grantstore.GraphNames{Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = serveAs(t, testDeps{Store: store, Clock: fx.Clock(), Lineage: lineage.Config{CursorKey: testCursorKey},
		Policy: pol, Auditor: w.audit, Manager: manage.NewManager(w.grants, pol, w.audit, nil, time.Now)}, "")
	return w
}

func (w *stewardWorld) role(n string) string { return w.ns + "-" + n }

func (w *stewardWorld) setupGrants() {
	roles := []string{"admins", "stewards", "team", "wide", "empty"}
	var cs []grant.Change
	for _, r := range roles {
		cs = append(cs, grant.Change{Op: grant.OpCreateRole, Role: &grant.Role{Name: w.role(r)}})
	}
	g := func(role string, p authz.Privilege, on grant.Securable) grant.Change {
		return grant.Change{Op: grant.OpGrant, Grant: &grant.Grant{Role: w.role(role), Privilege: p, On: on}}
	}
	bind := func(subject, role string) grant.Change {
		return grant.Change{Op: grant.OpBindRole, Binding: &grant.RoleBinding{Subject: subject, Role: w.role(role)}}
	}
	mine, theirs := grant.Securable{Kind: grant.SecNamespace, Namespace: w.ns}, grant.Securable{Kind: grant.SecNamespace, Namespace: w.other}
	cs = append(cs, g("admins", authz.PrivManageGrants, grant.Root()), g("stewards", authz.PrivManageGrants, mine),
		g("team", authz.PrivDescribe, grant.Securable{Kind: grant.SecPrefix, Namespace: w.ns, Name: "team"}),
		g("wide", authz.PrivDescribe, mine), g("wide", authz.PrivDescribe, theirs),
		bind(w.admin, "admins"), bind(w.steward, "stewards"))
	if _, err := w.grants.Apply(context.Background(), "steward-test", cs); err != nil {
		w.t.Fatalf("apply grants: %v", err)
	}
	w.t.Cleanup(func() {
		var del []grant.Change
		for _, r := range roles {
			del = append(del, grant.Change{Op: grant.OpDeleteRole, Role: &grant.Role{Name: w.role(r)}})
		}
		_, _ = w.grants.Apply(context.Background(), "steward-test-cleanup", del)
	})
}

const stewardGrantQ = `mutation($role: String!, $priv: Privilege!, $eff: GrantEffect, $ns: String!) {
  grant(grant: {role: $role, privilege: $priv, effect: $eff, on: {namespace: $ns}}) }`

// change runs grant or revoke as principal; it answers true when the mutation succeeded, false when it answered
// FORBIDDEN, and fails the test on anything else.
func (w *stewardWorld) change(principal, op, role string, priv authz.Privilege, eff grant.Effect, ns string) bool {
	w.t.Helper()
	q := strings.Replace(stewardGrantQ, "grant(grant", op+"(grant", 1)
	body := postGraphQL(w.t, w.srv.URL, principal, q,
		map[string]any{"role": role, "priv": string(priv), "eff": string(eff), "ns": ns})
	var r gqlResponse
	if err := json.Unmarshal(body, &r); err != nil {
		w.t.Fatalf("decode: %v\n%s", err, body)
	}
	switch {
	case len(r.Errors) == 0 && strings.Contains(string(r.Data), `"`+op+`":true`):
		return true
	case len(r.Errors) == 1 && r.Errors[0].Extensions["code"] == "FORBIDDEN":
		return false
	}
	w.t.Fatalf("%s %s on %s by %s: %s", op, role, ns, principal, body)
	return false
}

// seesDataset reports whether principal can look the fixture's dataset up.
func (w *stewardWorld) seesDataset(principal string) bool {
	w.t.Helper()
	body := postGraphQL(w.t, w.srv.URL, principal, `query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { name } }`,
		map[string]any{"ns": w.ns, "n": w.dataset})
	return strings.Contains(string(body), `"name":"`+w.dataset+`"`)
}

// TestStewardCannotDenyAdminsOnItsNamespace: a steward of a namespace cannot DENY (or grant to, or revoke from)
// the root administrators' role there, so the administrators keep the namespace and their grant management of it.
func TestStewardCannotDenyAdminsOnItsNamespace(t *testing.T) {
	w := newStewardWorld(t)
	if !w.seesDataset(w.admin) {
		t.Fatal("admin does not see the dataset before any change")
	}
	if w.change(w.steward, "grant", w.admins, authz.PrivDescribe, grant.Deny, w.ns) {
		t.Fatal("steward added DENY DESCRIBE on its namespace to the administrators' role")
	}
	if w.change(w.steward, "grant", w.admins, authz.PrivViewSQL, grant.Allow, w.ns) {
		t.Fatal("steward added a grant to the administrators' role")
	}
	if w.change(w.steward, "revoke", w.admins, authz.PrivManageGrants, grant.Allow, w.ns) {
		t.Fatal("steward revoked on the administrators' role")
	}
	if !w.seesDataset(w.admin) {
		t.Fatal("admin lost the dataset after the steward's refused DENY")
	}
	// The administrators still manage the namespace: a DENY DESCRIBE there would have taken MANAGE_GRANTS too.
	if !w.change(w.admin, "grant", w.role("team"), authz.PrivViewLineage, grant.Allow, w.ns) {
		t.Fatal("admin can no longer grant on the namespace")
	}
	var reasons []string
	for _, r := range w.audit.all() {
		if r.Principal == w.steward && r.Decision == audit.DecisionDeny {
			reasons = append(reasons, r.Reason)
		}
	}
	if len(reasons) != 3 || !strings.Contains(reasons[0], "MANAGE_GRANTS missing on ROOT") || !strings.Contains(reasons[0], w.admins) {
		t.Errorf("refusals should be audited naming ROOT and the role: %q", reasons)
	}
}

// TestStewardCannotChangeARoleReachingOutside: a role holding any grant outside the steward's namespace cannot
// gain, lose or be denied anything through the steward, even on the steward's own namespace.
func TestStewardCannotChangeARoleReachingOutside(t *testing.T) {
	w := newStewardWorld(t)
	wide := w.role("wide")
	for _, c := range []struct {
		op   string
		priv authz.Privilege
		eff  grant.Effect
	}{{"grant", authz.PrivViewLineage, grant.Allow}, {"grant", authz.PrivDescribe, grant.Deny}, {"revoke", authz.PrivDescribe, grant.Allow}} {
		if w.change(w.steward, c.op, wide, c.priv, c.eff, w.ns) {
			t.Errorf("steward %s %s %s on its namespace to a role with a grant outside it", c.op, c.eff, c.priv)
		}
	}
	// Administrators are unaffected: they manage everything the role holds.
	if !w.change(w.admin, "grant", wide, authz.PrivDescribe, grant.Deny, w.ns) || !w.change(w.admin, "revoke", wide, authz.PrivDescribe, grant.Deny, w.ns) {
		t.Error("admin could not grant and revoke a DENY on the wide role")
	}
	if !w.change(w.admin, "grant", w.admins, authz.PrivViewSQL, grant.Allow, w.other) {
		t.Error("admin could not add a grant to the administrators' own role")
	}
}

// TestStewardManagesRolesConfinedToItsNamespace: a role whose every grant lies in the steward's namespace (or a
// role without grants) is the steward's to grant, deny and revoke on.
func TestStewardManagesRolesConfinedToItsNamespace(t *testing.T) {
	w := newStewardWorld(t)
	team, empty := w.role("team"), w.role("empty")
	steps := []struct {
		op, role string
		priv     authz.Privilege
		eff      grant.Effect
	}{
		{"grant", team, authz.PrivViewLineage, grant.Allow},
		{"grant", team, authz.PrivViewSQL, grant.Deny},
		{"revoke", team, authz.PrivViewSQL, grant.Deny},
		{"revoke", team, authz.PrivViewLineage, grant.Allow},
		{"grant", empty, authz.PrivDescribe, grant.Allow},
		{"grant", w.stewardsR, authz.PrivViewSQL, grant.Allow},
	}
	for _, s := range steps {
		if !w.change(w.steward, s.op, s.role, s.priv, s.eff, w.ns) {
			t.Errorf("steward could not %s %s %s on its namespace to %s", s.op, s.eff, s.priv, s.role)
		}
	}
	// Outside its namespace the steward manages nothing, whatever the role.
	if w.change(w.steward, "grant", empty, authz.PrivDescribe, grant.Allow, w.other) {
		t.Error("steward granted outside its namespace")
	}
}

// postGraphQL sends one GraphQL request to url as principal and returns the raw body.
func postGraphQL(t *testing.T, url, principal, q string, vars map[string]any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(principalHeader, principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
