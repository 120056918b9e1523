package canaries

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/internal/testenv"
)

// nsAuth allows MANAGE_INVENTORY on the namespaces listed (a copy of registry's test helper).
type nsAuth map[string]bool

func (a nsAuth) CanOn(_ context.Context, _ authz.Principal, priv authz.Privilege, s grant.Securable) bool {
	return priv == authz.PrivManageInventory && s.Kind == grant.SecNamespace && a[s.Namespace]
}

type memAudit struct{ recs []audit.AuditRecord }

func (m *memAudit) Audit(_ context.Context, r audit.AuditRecord) error {
	m.recs = append(m.recs, r)
	return nil
}

// The canary endpoint registers with MANAGE_INVENTORY on every namespace the canary names (403 otherwise, before
// anything is stored), refuses a malformed canary naming the field and the rule, retires once (an unknown or
// retired canary is refused like a forbidden one), and audits each decision.
func TestCanaryEndpoint(t *testing.T) {
	store := testenv.Store(t)
	ns, other := testenv.Namespace(t), testenv.Namespace(t)+"-other"
	aud := &memAudit{}
	svc := NewService(NewStore(store), nil, nsAuth{ns: true}, aud, time.Now)
	mux := http.NewServeMux()
	NewHandler(svc, nil).Register(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), authz.Principal{Subject: "op", Kind: "user"})))
	}))
	t.Cleanup(srv.Close)
	name := ns + "-path"
	t.Cleanup(func() {
		_, _ = NewStore(store).run(t.Context(), `MATCH (c:Canary {key: $k}) DETACH DELETE c`, map[string]any{"k": name})
	})
	do := func(method, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+"/api/v1/canaries/"+name, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	body := func(toNs string) string {
		return `{"from": {"namespace": "` + ns + `", "name": "a"}, "to": {"namespace": "` + toNs + `", "name": "b"},
  "job": {"namespace": "` + ns + `", "name": "j"}}`
	}
	if code, b := do(http.MethodPut, `{"from": {"namespace": "`+ns+`", "name": "a"}}`); code != 400 || !strings.Contains(b, "to: namespace and name are required") {
		t.Errorf("malformed: %d %s", code, b)
	}
	if code, _ := do(http.MethodPut, body(other)); code != 403 {
		t.Errorf("forbidden namespace: %d", code)
	}
	if _, found, _ := NewStore(store).Get(t.Context(), name); found {
		t.Error("a refused canary was stored")
	}
	if code, b := do(http.MethodPut, body(ns)); code != 200 {
		t.Fatalf("register: %d %s", code, b)
	}
	c, found, err := NewStore(store).Get(t.Context(), name)
	if err != nil || !found || c.To.Namespace != ns || c.JobName != "j" || c.RegisteredBy != "op" {
		t.Fatalf("stored %+v %v %v", c, found, err)
	}
	if code, _ := do(http.MethodDelete, ""); code != 200 {
		t.Errorf("retire: %d", code)
	}
	if code, _ := do(http.MethodDelete, ""); code != 403 {
		t.Errorf("retire twice: %d", code)
	}
	var got []string
	for _, r := range aud.recs {
		got = append(got, r.Operation+":"+string(r.Decision))
	}
	want := []string{OpRegister + ":" + string(audit.DecisionDeny), OpRegister + ":" + string(audit.DecisionDeny),
		OpRegister + ":" + string(audit.DecisionAllow), OpRetire + ":" + string(audit.DecisionAllow),
		OpRetire + ":" + string(audit.DecisionDeny)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit %v, want %v", got, want)
	}
}
