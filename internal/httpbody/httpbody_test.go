package httpbody

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var errBig = errors.New("body: too large")

func open(t *testing.T, body []byte, enc string) ([]byte, int, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if enc != "" {
		r.Header.Set("Content-Encoding", enc)
	}
	rd, status, err := Open(httptest.NewRecorder(), r, 64, errBig)
	if err != nil {
		return nil, status, err
	}
	b, err := io.ReadAll(rd)
	return b, status, err
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	if b, _, err := open(t, []byte("hello"), ""); err != nil || string(b) != "hello" {
		t.Errorf("identity: %q %v", b, err)
	}
	if b, _, err := open(t, gz([]byte("hello")), "GZIP"); err != nil || string(b) != "hello" {
		t.Errorf("gzip: %q %v", b, err)
	}
	if _, _, err := open(t, bytes.Repeat([]byte("x"), 65), "identity"); !errors.Is(err, errBig) {
		t.Errorf("65 bytes: %v, want the limit's error", err)
	}
	// a small compressed body that inflates past the limit (a gzip bomb) fails on the decompressed bound
	if bomb := gz(bytes.Repeat([]byte("x"), 10_000)); len(bomb) > 64 {
		t.Fatalf("the bomb is %d bytes compressed; the test needs it under the limit", len(bomb))
	} else if _, _, err := open(t, bomb, "gzip"); !errors.Is(err, errBig) {
		t.Errorf("gzip bomb: %v, want the limit's error", err)
	}
	if _, status, err := open(t, []byte("not gzip"), "gzip"); status != http.StatusBadRequest || err == nil ||
		!strings.Contains(err.Error(), "not valid gzip") {
		t.Errorf("bad gzip: %d %v", status, err)
	}
	if _, status, err := open(t, []byte("x"), "br"); status != http.StatusUnsupportedMediaType || err == nil ||
		!strings.Contains(err.Error(), "Content-Encoding") {
		t.Errorf("brotli: %d %v", status, err)
	}
}
