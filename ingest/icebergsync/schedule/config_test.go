package schedule

import (
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParseFillsDefaults(t *testing.T) {
	f, err := Parse([]byte(`
catalogs:
  - name: lake
    uri: http://127.0.0.1:8281
    principal: svc-lake
  - name: polaris
    uri: https://polaris.example.com/api/catalog
    warehouse: analytics
    interval: 5m
    oauth2: {clientId: headwater, clientSecretEnv: POLARIS_SECRET, scope: "PRINCIPAL_ROLE:ALL"}
`), env(map[string]string{"POLARIS_SECRET": "s"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.LeaseTTL != DefaultLeaseTTL || f.Backoff.Initial != DefaultBackoffInitial || f.Backoff.Max != DefaultBackoffMax {
		t.Errorf("file defaults: %+v", f)
	}
	lake, _ := f.Named("lake")
	if lake.Interval != DefaultInterval || lake.Timeout != DefaultSyncTimeout || lake.OAuth2 != nil {
		t.Errorf("lake: %+v", lake)
	}
	pol, ok := f.Named("polaris")
	if !ok || pol.Interval != 5*time.Minute || pol.OAuth2.TokenURI != "https://polaris.example.com/api/catalog/v1/oauth/tokens" ||
		pol.OAuth2.Scope != "PRINCIPAL_ROLE:ALL" {
		t.Errorf("polaris: %+v %+v", pol, pol.OAuth2)
	}
}

// Every refusal names the entry, the field and the rule.
func TestParseRefusesWithTheFieldAndTheRule(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"empty", ``, "catalogs: the file names no catalog"},
		{"unknown key", "catalogs:\n  - name: a\n    uri: http://x\n    intervall: 5m\n", "field intervall not found"},
		{"bad name", "catalogs:\n  - name: Lake!\n    uri: http://x\n", "catalogs[0] (Lake!): name:"},
		{"relative uri", "catalogs:\n  - name: a\n    uri: /v1\n", "catalogs[0] (a): uri: \"/v1\" must be an absolute http or https URI"},
		{"twice", "catalogs:\n  - {name: a, uri: 'http://x'}\n  - {name: a, uri: 'http://y'}\n", "catalogs[1].name: \"a\" is named twice"},
		{"interval", "catalogs:\n  - {name: a, uri: 'http://x', interval: 10ms}\n", "catalogs[0] (a): interval: 10ms is below the minimum 1s"},
		{"lease", "leaseTTL: 1s\ncatalogs:\n  - {name: a, uri: 'http://x'}\n", "leaseTTL: 1s is below the minimum 3s"},
		{"backoff", "backoff: {initial: 1m, max: 1s}\ncatalogs:\n  - {name: a, uri: 'http://x'}\n", "backoff: initial 1m0s and max 1s"},
		{"two auths", "catalogs:\n  - {name: a, uri: 'http://x', tokenEnv: T, oauth2: {clientId: c, clientSecretEnv: S}}\n", "tokenEnv, oauth2: give at most one"},
		{"unset token", "catalogs:\n  - {name: a, uri: 'http://x', tokenEnv: NOPE}\n", "tokenEnv: the environment variable NOPE is empty or unset"},
		{"no client id", "catalogs:\n  - {name: a, uri: 'http://x', oauth2: {clientSecretEnv: S}}\n", "oauth2.clientId: required"},
		{"unset secret", "catalogs:\n  - {name: a, uri: 'http://x', oauth2: {clientId: c, clientSecretEnv: NOPE}}\n", "oauth2.clientSecretEnv: must name a set environment variable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), env(map[string]string{"T": "t", "S": "s"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
