package authn

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The refusal log line is rate-limited; what it drops is counted on the next line written.
func TestRefusalLogIsSampledWithASuppressedCount(t *testing.T) {
	clk := &testClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	a, err := NewAuthenticator(Config{HTTPTimeout: time.Second}, fakeTokens{}, nil, clk.Now, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	h := Middleware(a, nil, log)(echoPrincipal())
	for range 1000 {
		call(t, h, http.MethodGet, "/graphql", "Bearer "+goodAPIToken)
	}
	if n := strings.Count(buf.String(), "authentication refused"); n != refusalLogPerSecond {
		t.Fatalf("1000 refusals in one second wrote %d lines, want %d", n, refusalLogPerSecond)
	}
	buf.Reset()
	clk.Add(time.Second)
	call(t, h, http.MethodGet, "/graphql", "Bearer "+goodAPIToken)
	if !strings.Contains(buf.String(), "suppressed=990") {
		t.Fatalf("the next line must carry the suppressed count: %q", buf.String())
	}
}
