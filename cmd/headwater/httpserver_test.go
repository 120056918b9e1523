package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSlowBodyIsCutOffAfterTheReadTimeout: issue 13 item 18. A client that sends its headers and then trickles
// the body (a byte every 50 ms) is disconnected once the read timeout passes, and the handler's read fails with a
// deadline error; a client that sends the same body at once is served.
func TestSlowBodyIsCutOffAfterTheReadTimeout(t *testing.T) {
	lim := defaultServerLimits
	lim.ReadHeaderTimeout, lim.ReadTimeout = 200*time.Millisecond, 400*time.Millisecond
	readErr := make(chan error, 4)
	addr := startServer(t, lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if err != nil {
			http.Error(w, "body not read", http.StatusRequestTimeout)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))

	if status := fastPost(t, addr); status != http.StatusOK {
		t.Fatalf("fast client: status %d", status)
	}
	if err := <-readErr; err != nil {
		t.Fatalf("fast client: handler read %v", err)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	closed := make(chan time.Duration, 1)
	go func() { _, _ = io.Copy(io.Discard, conn); closed <- time.Since(start) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 1000 {
		select {
		case d := <-closed:
			if d > lim.ReadTimeout+time.Second {
				t.Fatalf("disconnected after %s, read timeout is %s", d, lim.ReadTimeout)
			}
			if err := <-readErr; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("handler read error %v, want a deadline error", err)
			}
			return
		case <-tick.C:
			_, _ = conn.Write([]byte("x"))
		}
	}
	t.Fatalf("a slow body of 1000 bytes over %s was never cut off", time.Since(start))
}

func TestListenerLimitsAreValidatedAndApplied(t *testing.T) {
	srv := defaultServerLimits.server("127.0.0.1:0", http.NotFoundHandler())
	if srv.ReadTimeout != defaultReadTimeout || srv.WriteTimeout != defaultWriteTimeout || srv.IdleTimeout != defaultIdleTimeout ||
		srv.ReadHeaderTimeout != defaultReadHeaderTimeout || srv.MaxHeaderBytes != defaultMaxHeaderBytes {
		t.Fatalf("server limits: %+v", srv)
	}
	c, err := parse(t, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if c.Serve.HTTP.serverLimits != defaultServerLimits || c.Ingest.HTTP != defaultServerLimits {
		t.Fatalf("flag defaults differ from the named defaults: serve %+v ingest %+v", c.Serve.HTTP.serverLimits, c.Ingest.HTTP)
	}
	c, err = parse(t, "serve", "--http-read-timeout=15s", "--http-write-timeout=7s", "--http-max-header-bytes=16384")
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Serve.HTTP.serverLimits; l.ReadTimeout != 15*time.Second || l.WriteTimeout != 7*time.Second || l.MaxHeaderBytes != 16384 {
		t.Fatalf("flags not applied: %+v", l)
	}
	for setting, args := range map[string][]string{
		"http.read-header-timeout":  {"serve", "--http-read-header-timeout=1m"},
		"http.max-header-bytes":     {"ingest", "--http-max-header-bytes=10"},
		"idle-timeout":              {"serve", "--http-idle-timeout=0s"},
		"graphql.max-tokens":        {"serve", "--graphql-max-tokens=-1"},
		"graphql.max-body-bytes":    {"serve", "--graphql-max-body-bytes=100"},
		"graphql.max-fields":        {"serve", "--graphql-max-fields=10"},
		"graphql.max-concurrent":    {"serve", "--graphql-max-concurrent=-2"},
		"graphql.query-cache-bytes": {"serve", "--graphql-query-cache-bytes=-1"},
	} {
		if _, err := parse(t, args...); err == nil || !strings.Contains(err.Error(), setting) {
			t.Errorf("%v: want an error naming %s, got %v", args, setting, err)
		}
	}
}

func startServer(t *testing.T, lim serverLimits, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := lim.server(l.Addr().String(), h)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func fastPost(t *testing.T, addr string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"+strings.Repeat("x", 1000))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
