package resolvers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/authz"
)

func lineageNames(t *testing.T, body []byte) (map[string]bool, bool) {
	t.Helper()
	var a shapeAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	out := map[string]bool{}
	for _, n := range a.Data.Lineage.Nodes {
		out[n.Name] = true
	}
	return out, a.Data.Lineage.PermissionsFiltered
}

// TestScopedCacheAndGrantChange: with the result cache on, an admin's cached answer is never served to a narrow
// principal; a grant made through the grant mutation shows on the narrow principal's next query, a revoke hides
// it again on the next query, and a refused mutation answers FORBIDDEN.
func TestScopedCacheAndGrantChange(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit, cache: true})
	op := w.operations()["lineage both"]
	h1 := w.secrets[0]
	for range 2 {
		if names, filtered := lineageNames(t, w.post(w.admin, op.q, op.vars)); !names[h1] || filtered {
			t.Fatalf("admin should see %s unfiltered: %v", h1, names)
		}
	}
	if names, _ := lineageNames(t, w.post(w.narrow, op.q, op.vars)); names[h1] || !names["pub.out"] {
		t.Fatalf("narrow got the admin's view from the cache: %v", names)
	}
	grant := `mutation($role: String!, $ns: String!, $eff: GrantEffect) { grant(grant: {role: $role, privilege: VIEW_LINEAGE,
  effect: $eff, on: {namespace: $ns, prefix: "sec"}}) }`
	revoke := strings.Replace(grant, "grant(grant", "revoke(grant", 1)
	vars := map[string]any{"role": w.role("narrow"), "ns": w.fx.NS}
	if body := w.post(w.narrow, grant, vars); !strings.Contains(string(body), `"FORBIDDEN"`) || strings.Contains(string(body), "MANAGE") {
		t.Errorf("a narrow principal's grant should be FORBIDDEN without detail: %s", body)
	}
	if body := w.post(w.admin, grant, vars); !strings.Contains(string(body), `"grant":true`) {
		t.Fatalf("admin grant: %s", body)
	}
	names, _ := lineageNames(t, w.post(w.narrow, op.q, op.vars))
	if !names[h1] || !names["pub.behind"] {
		t.Errorf("grant not in force on the next query: %v", names)
	}
	if body := w.post(w.admin, revoke, vars); !strings.Contains(string(body), `"revoke":true`) {
		t.Fatalf("admin revoke: %s", body)
	}
	body := w.post(w.narrow, op.q, op.vars)
	w.noLeak("after revoke", body)
	if names, _ := lineageNames(t, body); names["pub.behind"] {
		t.Errorf("revoked grant still in force: %v", names)
	}
}

// TestPermissionsFilteredAlwaysForNarrow: the flag is set for a narrow principal even when nothing was hidden,
// and never for an admin.
func TestPermissionsFilteredAlwaysForNarrow(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	vars := map[string]any{"ns": w.fx.NS, "name": "pub.out", "dir": "DOWNSTREAM", "depth": 2, "gran": "DATASET"}
	if _, f := lineageNames(t, w.post(w.narrow, leakLineageQ, vars)); !f {
		t.Error("permissionsFiltered false for a narrow principal with nothing hidden")
	}
	if _, f := lineageNames(t, w.post(w.admin, leakLineageQ, vars)); f {
		t.Error("permissionsFiltered true for an admin")
	}
	search := `{ search(query: "pub.out") { permissionsFiltered } }`
	if body := w.post(w.narrow, search, nil); !strings.Contains(string(body), `"permissionsFiltered":true`) {
		t.Errorf("search permissionsFiltered: %s", body)
	}
}

// TestAuditSensitiveTouch: a request returning a dataset carrying a sensitive tag writes one audit record
// naming it; the sensitive tag itself is shown only with VIEW_SENSITIVE.
func TestAuditSensitiveTouch(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenOmit})
	q := `query($ns: String!) { dataset(namespace: $ns, name: "pub.mid") { name tags { name } } }`
	if body := string(w.post(w.admin, q, map[string]any{"ns": w.fx.NS})); !strings.Contains(body, `"pii"`) {
		t.Errorf("admin (VIEW_SENSITIVE through MANAGE_GRANTS) should see the tag: %s", body)
	}
	if body := string(w.post(w.narrow, q, map[string]any{"ns": w.fx.NS})); strings.Contains(body, `"pii"`) {
		t.Errorf("narrow should not see the sensitive tag: %s", body)
	}
	n := 0
	for _, r := range w.audit.all() {
		if len(r.Nodes) > 0 && r.Nodes[0].Key == w.mid && r.Operation == "graphql" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want one touch record per request (2), got %d: %+v", n, w.audit.all())
	}
}
