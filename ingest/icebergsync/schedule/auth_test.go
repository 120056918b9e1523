package schedule

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// What a Polaris-style catalog entry sends, checked against a stub server speaking the Iceberg REST protocol (not
// a catalog product: none is reachable from this machine): the OAuth2 client-credentials grant at the default
// token endpoint <uri>/v1/oauth/tokens with the entry's client id, the secret from the environment and the scope;
// GET /v1/config with the warehouse; then every path under the prefix the config answered, a prefix of two
// segments (`catalogs/<id>`, as Glue's endpoint answers) kept as two segments, with the bearer token.
func TestOAuth2CatalogsUseTheTokenTheWarehouseAndThePrefix(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.EscapedPath() {
		case "/v1/oauth/tokens":
			_ = r.ParseForm()
			seen = append(seen, "token "+r.Form.Get("grant_type")+" "+r.Form.Get("client_id")+" "+r.Form.Get("client_secret")+" "+r.Form.Get("scope"))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"tok-1","token_type":"bearer","expires_in":3600}`))
		case "/v1/config":
			seen = append(seen, "config warehouse="+r.URL.Query().Get("warehouse")+" "+r.Header.Get("Authorization"))
			_ = json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{"prefix": "catalogs/123456789012"}})
		default:
			seen = append(seen, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization"))
			_, _ = w.Write([]byte(`{"namespaces":[["db"]]}`))
		}
	}))
	defer srv.Close()
	c := Catalog{Name: "polaris", URI: srv.URL, Warehouse: "analytics", OAuth2: &OAuth2{ClientID: "headwater",
		ClientSecretEnv: "SECRET", Scope: "PRINCIPAL_ROLE:ALL", TokenURI: srv.URL + "/v1/oauth/tokens"}}
	client, err := c.Client(t.Context(), func(k string) string { return map[string]string{"SECRET": "s3cr3t"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if ns, err := client.ListNamespaces(t.Context(), nil); err != nil || len(ns) != 1 {
		t.Fatalf("list namespaces: %v %v", ns, err)
	}
	want := []string{"token client_credentials headwater s3cr3t PRINCIPAL_ROLE:ALL", "config warehouse=analytics Bearer tok-1",
		"GET /v1/catalogs/123456789012/namespaces Bearer tok-1"}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("requests %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d: %q, want %q", i, seen[i], want[i])
		}
	}
}
