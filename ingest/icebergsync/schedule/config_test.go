package schedule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync/sigv4"
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
		{"two auths", "catalogs:\n  - {name: a, uri: 'http://x', tokenEnv: T, oauth2: {clientId: c, clientSecretEnv: S}}\n", "tokenEnv, oauth2, sigv4: give at most one"},
		{"token and sigv4", "catalogs:\n  - {name: a, uri: 'http://x', tokenEnv: T, sigv4: {region: us-east-1}}\n", "tokenEnv, oauth2, sigv4: give at most one"},
		{"bad region", "catalogs:\n  - {name: a, uri: 'http://x', sigv4: {region: Virginia}}\n", `catalogs[0] (a): sigv4.region: "Virginia" must be an AWS region`},
		{"unset access key", "catalogs:\n  - {name: a, uri: 'http://x', sigv4: {region: us-east-1, accessKeyIdEnv: NOPE}}\n", "sigv4.accessKeyIdEnv: the environment variable NOPE is empty or unset"},
		{"unset default secret", "catalogs:\n  - {name: a, uri: 'http://x', sigv4: {region: us-east-1, accessKeyIdEnv: T}}\n", "sigv4.secretAccessKeyEnv: the environment variable AWS_SECRET_ACCESS_KEY is empty or unset"},
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

// TestSigV4CatalogsAreSignedForTheirRegionAndService parses a sigv4 entry (defaults: service glue, the AWS CLI's
// variable names) and connects with it to a server that checks every request's signature by signing the request
// it received again with the same key and time: GET /v1/config arrives signed, so the client is built.
func TestSigV4CatalogsAreSignedForTheirRegionAndService(t *testing.T) {
	vars := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret"}
	var checked int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		if err != nil {
			http.Error(w, "no X-Amz-Date", http.StatusForbidden)
			return
		}
		// Sign again over the headers the signature names (as AWS does; the transport adds some after signing).
		again := r.Clone(r.Context())
		again.Header = http.Header{}
		auth := r.Header.Get("Authorization")
		if _, rest, ok := strings.Cut(auth, "SignedHeaders="); ok {
			names, _, _ := strings.Cut(rest, ",")
			for h := range strings.SplitSeq(names, ";") {
				if h != "host" && h != "x-amz-date" {
					again.Header.Set(h, r.Header.Get(h))
				}
			}
		}
		again.URL.Scheme, again.URL.Host, again.Host = "http", r.Host, r.Host
		verifier, _ := sigv4.New(nil, "eu-central-1", "glue", sigv4.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"})
		verifier.Now = func() time.Time { return at }
		if err := verifier.Sign(r.Context(), again, r.Header.Get("X-Amz-Content-Sha256")); err != nil ||
			again.Header.Get("Authorization") != auth {
			http.Error(w, "signature does not match", http.StatusForbidden)
			return
		}
		checked++
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"defaults":{},"overrides":{}}`))
	}))
	defer srv.Close()
	f, err := Parse([]byte("catalogs:\n  - {name: glue, uri: '"+srv.URL+"', warehouse: '123456789012', sigv4: {region: eu-central-1}}\n"), env(vars))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Catalogs[0]
	if c.SigV4.Service != "glue" || c.SigV4.SessionTokenEnv != "AWS_SESSION_TOKEN" {
		t.Errorf("defaults: %+v", *c.SigV4)
	}
	if _, err := c.Client(t.Context(), env(vars)); err != nil {
		t.Fatalf("client through a signature-checking server: %v", err)
	}
	if checked == 0 {
		t.Error("no request reached the server signed")
	}
}
