package grantpolicy

import (
	"testing"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// An exchanged token's principal (ADR 0051) may PRODUCE only in the namespaces it was exchanged for, and only
// where its service's grants allow it; it may describe, list or see lineage of nothing, and its scope is its own.
func TestRestrictedPrincipalProducesOnlyInItsNamespaces(t *testing.T) {
	ev, p := evalWith(
		grant.Grant{Privilege: authz.PrivManageGrants, On: grant.Securable{Kind: grant.SecEnvironment, Environment: "prod"}},
		grant.Grant{Privilege: authz.PrivProduce, On: grant.Securable{Kind: grant.SecNamespace, Namespace: crm}},
	)
	full := ev.Scope(p, nil)
	r := p
	r.Restrict = authz.RestrictTo([]string{wh, "s3://not-granted"})
	ns := func(n string) grant.Securable { return grant.Securable{Kind: grant.SecNamespace, Namespace: n} }
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"unrestricted: PRODUCE on wh (MANAGE_GRANTS on prod implies it)", ev.CanOn(p, nil, authz.PrivProduce, ns(wh)), true},
		{"unrestricted: PRODUCE on crm", ev.CanOn(p, nil, authz.PrivProduce, ns(crm)), true},
		{"restricted: PRODUCE on wh, exchanged for and granted", ev.CanOn(r, nil, authz.PrivProduce, ns(wh)), true},
		{"restricted: PRODUCE on crm, granted but not exchanged for", ev.CanOn(r, nil, authz.PrivProduce, ns(crm)), false},
		{"restricted: PRODUCE on a namespace exchanged for but never granted", ev.CanOn(r, nil, authz.PrivProduce, ns("s3://not-granted")), false},
		{"restricted: DESCRIBE on a dataset of wh", ev.Can(r, nil, authz.PrivDescribe, ds(wh, "a.b")), false},
		{"restricted: LIST on wh", ev.CanOn(r, nil, authz.PrivList, ns(wh)), false},
		{"restricted: MANAGE_GRANTS on ROOT", ev.CanOn(r, nil, authz.PrivManageGrants, grant.Root()), false},
		{"restricted: covers wh for DESCRIBE", ev.CoversNamespace(r, nil, authz.PrivDescribe, wh), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if s := ev.Scope(r, nil); s.Global || s.Fingerprint == full.Fingerprint {
		t.Errorf("restricted scope %+v shares the service's %+v", s, full)
	}
}
