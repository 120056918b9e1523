package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(b)
}

func TestExplorerServesTheEmbeddedBuild(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux)
	res, body := get(t, mux, "/explore/")
	if res.StatusCode != 200 || !strings.Contains(body, `<div id="root">`) || !strings.Contains(body, "assets/explorer.js") {
		t.Fatalf("GET /explore/: %d %q", res.StatusCode, body)
	}
	for k, want := range map[string]string{"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	res, body = get(t, mux, "/explore/assets/explorer.js")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || len(body) < 1000 {
		t.Fatalf("GET explorer.js: %d %s, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(body))
	}
	tag := res.Header.Get("ETag")
	if tag == "" {
		t.Fatal("explorer.js has no ETag")
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/explore/assets/explorer.js", nil)
	req.Header.Set("If-None-Match", tag)
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("revalidating explorer.js with its ETag: %d, want 304", rec.Code)
	}
	if res, _ = get(t, mux, "/explore/assets/missing.js"); res.StatusCode != 404 {
		t.Errorf("a missing asset: %d, want 404", res.StatusCode)
	}
}

func TestExplorerBarePathRedirectsKeepingTheView(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux)
	res, _ := get(t, mux, "/explore?ns=postgres%3A%2F%2Fwh&name=orders&level=column")
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/explore/?ns=postgres%3A%2F%2Fwh&name=orders&level=column" {
		t.Fatalf("GET /explore?...: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
}
