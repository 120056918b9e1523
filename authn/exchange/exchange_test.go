package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
)

const svcToken = "hw_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

type fakeAuth map[string]authn.Identity

func (f fakeAuth) AuthenticateToken(_ context.Context, raw string) (authn.Identity, error) {
	if id, ok := f[raw]; ok {
		return id, nil
	}
	return authn.Identity{}, authn.ErrInvalid
}

type fakeMint struct{ got []apitoken.NewToken }

func (f *fakeMint) Create(_ context.Context, r apitoken.NewToken) (string, authn.TokenInfo, error) {
	f.got = append(f.got, r)
	return "hw_minted", authn.TokenInfo{}, nil
}

type produceIn []string

func (p produceIn) CanProduce(_ context.Context, _ authz.Principal, ns string, _ []string) (bool, string) {
	if slices.Contains(p, ns) {
		return true, ""
	}
	return false, ns
}

type fakeAudit struct {
	fail bool
	recs []audit.AuditRecord
}

func (a *fakeAudit) Audit(_ context.Context, r audit.AuditRecord) error {
	if a.fail {
		return errors.New("audit stream down")
	}
	a.recs = append(a.recs, r)
	return nil
}

func post(t *testing.T, h *Handler, form url.Values) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var m map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &m)
	return w.Code, m
}

func form(kv ...string) url.Values {
	f := url.Values{"grant_type": {GrantType}, "subject_token": {svcToken}, "subject_token_type": {TokenTypeAccess},
		"scope": {"produce:airflow-prod"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			f.Del(kv[i])
		} else {
			f.Set(kv[i], kv[i+1])
		}
	}
	return f
}

func TestExchangeRefusesWithTheParameterAndTheRule(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	auth := fakeAuth{svcToken: {Principal: authz.Principal{Subject: "svc-airflow", Kind: authn.KindService}, TokenID: "0123456789abcdef"},
		"hw_user": {Principal: authz.Principal{Subject: "alice", Kind: authn.KindUser}},
		"hw_run":  {Principal: authz.Principal{Subject: "svc-airflow", Kind: authn.KindProducer, Restrict: "airflow-prod"}}}
	canonical := func(s string) (string, error) {
		if strings.ContainsAny(s, " \t") {
			return "", errors.New("white space")
		}
		return strings.TrimSuffix(s, "/"), nil
	}
	for _, tc := range []struct {
		name      string
		f         url.Values
		code      int
		err, want string
	}{
		{"grant type", form("grant_type", "client_credentials"), 400, "unsupported_grant_type", "grant_type"},
		{"no subject", form("subject_token", ""), 400, "invalid_request", "subject_token: required"},
		{"subject type", form("subject_token_type", "urn:ietf:params:oauth:token-type:jwt"), 400, "invalid_request", "subject_token_type"},
		{"requested type", form("requested_token_type", "urn:ietf:params:oauth:token-type:id_token"), 400, "invalid_request", "requested_token_type"},
		{"not an api token", form("subject_token", "eyJhbGciOi"), 400, "invalid_request", "Headwater API token"},
		{"lifetime short", form("lifetime", "1"), 400, "invalid_request", "lifetime"},
		{"lifetime long", form("lifetime", "86400"), 400, "invalid_request", "lifetime"},
		{"no scope", form("scope", ""), 400, "invalid_scope", "scope: 0 entries"},
		{"scope prefix", form("scope", "write:airflow-prod"), 400, "invalid_scope", `"write:airflow-prod" must be produce:<namespace>`},
		{"unknown token", form("subject_token", "hw_nope"), 400, "invalid_grant", "invalid, revoked or expired"},
		{"user token", form("subject_token", "hw_user"), 400, "invalid_grant", "only service and producer"},
		{"re-exchange", form("subject_token", "hw_run"), 400, "invalid_grant", "cannot be exchanged again"},
		{"beyond grants", form("scope", "produce:airflow-prod produce:s3://other"), 400, "invalid_scope", "holds no PRODUCE on s3://other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mint, aud := &fakeMint{}, &fakeAudit{}
			h := New(auth, mint, produceIn{"airflow-prod", "s3://lake"}, canonical, aud, func() time.Time { return now })
			code, body := post(t, h, tc.f)
			if code != tc.code || body["error"] != tc.err || !strings.Contains(body["error_description"].(string), tc.want) {
				t.Errorf("%d %v, want %d %s naming %q", code, body, tc.code, tc.err, tc.want)
			}
			if len(mint.got) != 0 {
				t.Errorf("a refused exchange minted %+v", mint.got)
			}
		})
	}
}

func TestExchangeMintsARestrictedShortLivedTokenAndAuditsIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	auth := fakeAuth{svcToken: {Principal: authz.Principal{Subject: "svc-airflow", Kind: authn.KindService}, TokenID: "0123456789abcdef"}}
	mint, aud := &fakeMint{}, &fakeAudit{}
	h := New(auth, mint, produceIn{"airflow-prod", "s3://lake"}, func(s string) (string, error) { return strings.TrimSuffix(s, "/"), nil },
		aud, func() time.Time { return now })
	code, body := post(t, h, form("scope", "produce:s3://lake/ produce:airflow-prod produce:s3://lake", "lifetime", "600"))
	if code != 200 || body["access_token"] != "hw_minted" || body["expires_in"] != float64(600) || body["scope"] != "produce:airflow-prod produce:s3://lake" {
		t.Fatalf("%d %v", code, body)
	}
	if len(mint.got) != 1 || mint.got[0].Owner != "svc-airflow" || mint.got[0].Kind != authn.KindProducer ||
		!mint.got[0].ExpiresAt.Equal(now.Add(10*time.Minute)) || strings.Join(mint.got[0].Namespaces, ",") != "airflow-prod,s3://lake" ||
		mint.got[0].CreatedBy != "token-exchange:0123456789abcdef" {
		t.Fatalf("minted %+v", mint.got)
	}
	if len(aud.recs) != 1 || aud.recs[0].Operation != Operation || aud.recs[0].Decision != audit.DecisionAllow {
		t.Fatalf("audit %+v", aud.recs)
	}
	// no audit, no token
	mint2 := &fakeMint{}
	h = New(auth, mint2, produceIn{"airflow-prod"}, func(s string) (string, error) { return s, nil }, &fakeAudit{fail: true}, func() time.Time { return now })
	if code, body := post(t, h, form()); code != 503 || body["error"] != "temporarily_unavailable" || len(mint2.got) != 0 {
		t.Fatalf("with the audit stream down: %d %v, minted %v", code, body, mint2.got)
	}
}
