// Package httpbody opens the request bodies of the upload endpoints (inventories, dbt manifests): bounded to a
// limit before and after gzip, gunzipped when Content-Encoding says so, with the refusal's status; and it marks
// the answers of requests refused before their bodies were read (LeaveUnread).
package httpbody

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Open bounds r's body to limit bytes and gunzips it when Content-Encoding is gzip; reading more than limit
// bytes, before or after gzip, fails with tooLarge. On a refusal it returns the HTTP status and an error naming
// the header or the body and the rule.
func Open(w http.ResponseWriter, r *http.Request, limit int64, tooLarge error) (io.Reader, int, error) {
	raw := http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return &bounded{r: raw, limit: limit, tooLarge: tooLarge}, 0, nil
	case "gzip":
		zr, err := gzip.NewReader(raw)
		if err != nil {
			if TooLarge(err) {
				return nil, http.StatusRequestEntityTooLarge, tooLarge
			}
			return nil, http.StatusBadRequest, errors.New("body: Content-Encoding is gzip but the body is not valid gzip")
		}
		return &bounded{r: zr, limit: limit, tooLarge: tooLarge}, 0, nil
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Encoding: must be identity or gzip, got %q", enc)
	}
}

// LeaveUnread makes the answer to a request refused before its body was read (a slot or byte budget was full,
// the body is too large) close the connection. Without it net/http reads up to 256 KiB of the unread body before
// it sends the answer, so a client whose body is slow to arrive waits for its own refusal, holding a server
// goroutine, for as long as the body takes. Call it before the answer's header is written.
func LeaveUnread(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

// TooLarge reports whether err is the request body limit's.
func TooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// bounded reads at most limit bytes and then fails with tooLarge.
type bounded struct {
	r        io.Reader
	n, limit int64
	tooLarge error
}

func (b *bounded) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit || TooLarge(err) {
		return n, b.tooLarge
	}
	return n, err
}
