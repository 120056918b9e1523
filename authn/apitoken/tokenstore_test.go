package apitoken

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/internal/testenv"
)

func newTokenStore(t *testing.T) (*Store, *testClock, string) {
	t.Helper()
	s := testenv.Store(t)
	clk := &testClock{now: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)}
	owner := testenv.Namespace(t) + "-spark"
	t.Cleanup(func() {
		_, _ = neo4j.ExecuteQuery(t.Context(), s.Driver, "MATCH (t:ApiToken {owner: $o}) DELETE t",
			map[string]any{"o": owner}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	})
	return NewStore(s, clk.Now), clk, owner
}

func TestTokenStoreLifecycle(t *testing.T) {
	ts, clk, owner := newTokenStore(t)
	ctx := t.Context()
	tok, info, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindProducer, Description: "spark prod", CreatedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "hw_"+info.ID+"_") || len(tok) != len("hw_")+tokenIDLen+1+tokenSecretLen {
		t.Fatalf("token shape %q", tok)
	}
	got, err := ts.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != owner || got.Kind != authn.KindProducer || got.Principal().Subject != owner || !got.CreatedAt.Equal(info.CreatedAt) {
		t.Errorf("verified %+v, created %+v", got, info)
	}
	// The secret is not stored: the node holds only a hash that differs from every part of the token.
	rec, err := neo4j.ExecuteQuery(ctx, ts.store.Driver, "MATCH (t:ApiToken {id: $id}) RETURN properties(t) AS p",
		map[string]any{"id": info.ID}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(ts.store.Database))
	if err != nil {
		t.Fatal(err)
	}
	props, _ := rec.Records[0].Get("p")
	secret := tok[len("hw_")+tokenIDLen+1:]
	for k, v := range props.(map[string]any) {
		if s, ok := v.(string); ok && (strings.Contains(s, secret) || s == tok) {
			t.Errorf("property %s holds the secret", k)
		}
	}
	wrong := tok[:len(tok)-1] + flip(tok[len(tok)-1])
	if _, err := ts.Verify(ctx, wrong); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("wrong secret: %v", err)
	}
	unknown := "hw_0000000000000000_" + secret
	if _, err := ts.Verify(ctx, unknown); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("unknown id: %v", err)
	}
	for _, bad := range []string{"hw_", "hw_xyz_abc", tok + "x", "HW_" + tok[3:], "hw_" + strings.ToUpper(info.ID) + tok[3+tokenIDLen:]} {
		if _, err := ts.Verify(ctx, bad); !errors.Is(err, authn.ErrInvalid) {
			t.Errorf("malformed %q: %v", bad, err)
		}
	}
	if err := ts.Revoke(ctx, info.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("revoked token: %v, want authn.ErrInvalid", err)
	}
	first, _ := ts.Get(ctx, info.ID)
	clk.Add(time.Hour)
	if err := ts.Revoke(ctx, info.ID, "someone-else"); err != nil {
		t.Fatal(err)
	}
	if again, _ := ts.Get(ctx, info.ID); !again.RevokedAt.Equal(first.RevokedAt) || again.RevokedAt.IsZero() {
		t.Errorf("second revoke moved revokedAt: %v -> %v", first.RevokedAt, again.RevokedAt)
	}
	if err := ts.Revoke(ctx, "0000000000000000", "admin"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoking an unknown id: %v", err)
	}
}

func TestTokenStoreExpiry(t *testing.T) {
	ts, clk, owner := newTokenStore(t)
	ctx := t.Context()
	tok, info, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService, ExpiresAt: clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	clk.Add(time.Hour)
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("at expiry: %v, want authn.ErrInvalid", err)
	}
	if got, _ := ts.Get(ctx, info.ID); !got.ExpiresAt.Equal(info.ExpiresAt) {
		t.Errorf("expiry stored %v, want %v", got.ExpiresAt, info.ExpiresAt)
	}
	if _, _, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService, ExpiresAt: clk.Now().Add(-time.Second)}); err == nil {
		t.Error("a token expiring in the past must be refused")
	}
	if _, _, err := ts.Create(ctx, NewToken{Owner: owner, Kind: "root"}); err == nil {
		t.Error("an unknown kind must be refused")
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

type recAuditor struct{ recs []audit.AuditRecord }

func (r *recAuditor) Audit(_ context.Context, rec audit.AuditRecord) error {
	r.recs = append(r.recs, rec)
	return nil
}

// rootAdmins holds MANAGE_GRANTS on ROOT for the listed subjects.
type rootAdmins map[string]bool

func (a rootAdmins) CanOn(_ context.Context, p authz.Principal, priv authz.Privilege, s grant.Securable) bool {
	return a[p.Subject] && priv == authz.PrivManageGrants && s.Kind == grant.SecRoot
}

func TestTokenManagerPermissions(t *testing.T) {
	ts, clk, owner := newTokenStore(t)
	ctx := t.Context()
	aud := &recAuditor{}
	admin := authz.Principal{Subject: owner + "-admin", Kind: authn.KindUser}
	user := authz.Principal{Subject: owner, Kind: authn.KindUser}
	m := NewManager(ts, rootAdmins{admin.Subject: true}, aud, clk.Now)
	if _, _, err := m.Create(ctx, user, NewToken{Owner: owner, Kind: authn.KindUser}); err != nil {
		t.Fatalf("own user token: %v", err)
	}
	if _, _, err := m.Create(ctx, user, NewToken{Owner: owner, Kind: authn.KindProducer}); !errors.Is(err, ErrForbidden) {
		t.Errorf("own producer token without admin: %v", err)
	}
	tok, info, err := m.Create(ctx, admin, NewToken{Owner: owner, Kind: authn.KindProducer})
	if err != nil {
		t.Fatal(err)
	}
	if info.CreatedBy != admin.Subject {
		t.Errorf("createdBy %q", info.CreatedBy)
	}
	if err := m.Revoke(ctx, authz.Principal{Subject: "mallory"}, info.ID); !errors.Is(err, ErrForbidden) {
		t.Errorf("revoking someone else's token: %v", err)
	}
	if err := m.Revoke(ctx, user, info.ID); err != nil {
		t.Fatalf("owner revokes: %v", err)
	}
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("revoked token verifies: %v", err)
	}
	var got []string
	for _, r := range aud.recs {
		got = append(got, r.Operation+":"+string(r.Decision))
	}
	want := "createToken:ALLOW createToken:DENY createToken:ALLOW revokeToken:DENY revokeToken:ALLOW"
	if strings.Join(got, " ") != want {
		t.Errorf("audit %v, want %s", got, want)
	}
}
