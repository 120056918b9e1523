package apitoken

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
)

// The test helpers the tests that moved from authn use (copies of authn's: a test helper is not exported).

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func echoPrincipal() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := authz.FromContext(r.Context())
		_, _ = fmt.Fprintf(w, "%s|%s|%s", p.Subject, p.Kind, strings.Join(authz.ClaimedRoles(r.Context(), p), ","))
	})
}

type result struct {
	status int
	body   string
}

func call(t *testing.T, h http.Handler, method, path, auth string) result {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return result{rec.Code, string(b)}
}
