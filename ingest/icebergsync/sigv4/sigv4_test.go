package sigv4

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The "get-vanilla" case of AWS's Signature Version 4 test suite (docs.aws.amazon.com, "Signature Version 4 test
// suite"): a bare GET / to example.amazonaws.com at 20150830T123600Z with the suite's example key.
func TestSignMatchesTheAWSTestSuitesGetVanilla(t *testing.T) {
	tr, err := New(nil, "us-east-1", "service", Credentials{AccessKeyID: "AKIDEXAMPLE",
		SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"})
	if err != nil {
		t.Fatal(err)
	}
	tr.Now = func() time.Time { return time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC) }
	req, _ := http.NewRequest(http.MethodGet, "https://example.amazonaws.com/", nil)
	if err := tr.Sign(t.Context(), req, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"); err != nil {
		t.Fatal(err)
	}
	want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, " +
		"Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	if got := req.Header.Get("Authorization"); got != want {
		t.Errorf("Authorization:\n got %s\nwant %s", got, want)
	}
	if got := req.Header.Get("X-Amz-Date"); got != "20150830T123600Z" {
		t.Errorf("X-Amz-Date = %q", got)
	}
}

// TestRoundTripSignsEveryRequestWithItsBody sends a GET and a POST with a body through the transport: each arrives
// signed for glue in its region with the body's hash, the body intact, the caller's request unchanged, and a
// session token passed on.
func TestRoundTripSignsEveryRequestWithItsBody(t *testing.T) {
	type seen struct{ auth, hash, date, token, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Header.Get("Authorization"), r.Header.Get("X-Amz-Content-Sha256"), r.Header.Get("X-Amz-Date"),
			r.Header.Get("X-Amz-Security-Token"), string(b)})
	}))
	defer srv.Close()
	tr, err := New(nil, "eu-west-1", "glue", Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", SessionToken: "session"})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	getReq, _ := http.NewRequest(http.MethodGet, srv.URL+"/iceberg/v1/config?warehouse=123456789012", nil)
	if _, err := hc.Do(getReq); err != nil {
		t.Fatal(err)
	}
	if getReq.Header.Get("Authorization") != "" {
		t.Error("the caller's request was changed")
	}
	if _, err := hc.Post(srv.URL+"/iceberg/v1/namespaces", "application/json", strings.NewReader(`{"namespace":["a"]}`)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("requests seen: %d", len(got))
	}
	wantHash := []string{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"" /* checked below: not the empty body's */}
	for i, s := range got {
		if !strings.HasPrefix(s.auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(s.auth, "/eu-west-1/glue/aws4_request") ||
			!strings.Contains(s.auth, "x-amz-content-sha256") || !strings.Contains(s.auth, "x-amz-security-token") {
			t.Errorf("request %d: Authorization %q", i, s.auth)
		}
		if s.date == "" || s.token != "session" {
			t.Errorf("request %d: X-Amz-Date %q, X-Amz-Security-Token %q", i, s.date, s.token)
		}
		if wantHash[i] != "" && s.hash != wantHash[i] {
			t.Errorf("request %d: X-Amz-Content-Sha256 %q", i, s.hash)
		}
	}
	if got[1].body != `{"namespace":["a"]}` || got[1].hash == wantHash[0] || len(got[1].hash) != 64 {
		t.Errorf("POST: body %q hash %q", got[1].body, got[1].hash)
	}
}

func TestNewRefusesWhatItCannotSignWith(t *testing.T) {
	for name, c := range map[string]struct {
		region, service string
		creds           Credentials
	}{
		"no region":  {"", "glue", Credentials{AccessKeyID: "a", SecretAccessKey: "b"}},
		"no service": {"us-east-1", "", Credentials{AccessKeyID: "a", SecretAccessKey: "b"}},
		"no secret":  {"us-east-1", "glue", Credentials{AccessKeyID: "a"}},
	} {
		if _, err := New(nil, c.region, c.service, c.creds); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
