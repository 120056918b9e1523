package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Gateway paths (docs: /work/shared/API.md).
const (
	PathSingle = "/api/v1/lineage"
	PathBatch  = "/api/v1/lineage/batch"

	defaultRetryAfter = time.Second
	maxRetryAfter     = 30 * time.Second
	maxErrorBody      = 512
)

// ErrRejected is the error of an event the gateway refused (4xx other than 429, or a per-event rejection).
var ErrRejected = errors.New("event rejected")

// ErrThrottled is the error of an event still answered 429/503 after the last attempt.
var ErrThrottled = errors.New("throttled")

// HTTPConfig says where and how to post.
type HTTPConfig struct {
	BaseURL     string // e.g. http://127.0.0.1:8080
	Token       string // sent as Authorization: Bearer <token> when not empty
	Batch       bool   // use the batch endpoint with a JSON array
	MaxAttempts int    // attempts per request when answered 429/503 (at least 1)
	Timeout     time.Duration
}

// HTTP posts events to the gateway.
type HTTP struct {
	c      HTTPConfig
	client *http.Client
	sleep  func(context.Context, time.Duration) error
}

var _ Sink = (*HTTP)(nil)

// NewHTTP makes an HTTP sink with a pooled client.
func NewHTTP(c HTTPConfig) *HTTP {
	if c.MaxAttempts < 1 {
		c.MaxAttempts = 1
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second}
	return &HTTP{c: c, client: &http.Client{Transport: tr, Timeout: c.Timeout}, sleep: sleepCtx}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Send posts each event (or the whole slice to the batch endpoint) and answers per event.
func (h *HTTP) Send(ctx context.Context, events []gen.Event) ([]Result, error) {
	if h.c.Batch {
		return h.sendBatch(ctx, events)
	}
	out := make([]Result, len(events))
	for i, ev := range events {
		r, err := h.post(ctx, PathSingle, ev.Body)
		if err != nil {
			return nil, err
		}
		out[i] = r.single()
	}
	return out, nil
}

func (h *HTTP) sendBatch(ctx context.Context, events []gen.Event) ([]Result, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, ev := range events {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(ev.Body)
	}
	buf.WriteByte(']')
	r, err := h.post(ctx, PathBatch, buf.Bytes())
	if err != nil {
		return nil, err
	}
	return r.batch(len(events)), nil
}

// reply is the last answer to a request and how it was reached.
type reply struct {
	status, attempts, throttled int
	body                        []byte
}

// post sends one request, waiting out 429/503 Retry-After up to MaxAttempts. Transport errors are returned.
func (h *HTTP) post(ctx context.Context, path string, body []byte) (reply, error) {
	var r reply
	for r.attempts < h.c.MaxAttempts {
		r.attempts++
		status, hdr, b, err := h.do(ctx, path, body)
		if err != nil {
			return r, err
		}
		r.status, r.body = status, b
		if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
			return r, nil
		}
		r.throttled++
		if r.attempts < h.c.MaxAttempts {
			if err := h.sleep(ctx, retryAfter(hdr.Get("Retry-After"))); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

func (h *HTTP) do(ctx context.Context, path string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.c.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("request %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.c.Token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("post %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer of %s: %w", path, err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// retryAfter parses delay-seconds or an HTTP date, bounded.
func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter)
	}
	return defaultRetryAfter
}

func (r reply) base() Result {
	return Result{Status: r.status, Attempts: r.attempts, Throttled: r.throttled}
}

func (r reply) failure() error {
	if r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable {
		return fmt.Errorf("%w: status %d after %d attempts", ErrThrottled, r.status, r.attempts)
	}
	return fmt.Errorf("%w: status %d: %s", ErrRejected, r.status, truncate(r.body))
}

func (r reply) single() Result {
	res := r.base()
	if r.status < 200 || r.status > 299 {
		res.Err = r.failure()
		return res
	}
	var a struct {
		EventID string `json:"eventId"`
	}
	_ = json.Unmarshal(r.body, &a) // a 2xx without a readable id is still accepted
	res.EventID = a.EventID
	return res
}

// batchItem is the per-event answer of the batch endpoint; the shape is read tolerantly.
type batchItem struct {
	EventID  string          `json:"eventId"`
	Status   json.RawMessage `json:"status"`
	Accepted *bool           `json:"accepted"`
	Error    json.RawMessage `json:"error"`
	Reason   string          `json:"reason"`
}

func (r reply) batch(n int) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = r.base()
	}
	if r.status < 200 || r.status > 299 {
		for i := range out {
			out[i].Err = r.failure()
		}
		return out
	}
	items := parseBatch(r.body)
	for i := range out {
		if i >= len(items) {
			out[i].Err = fmt.Errorf("%w: batch answer has %d items for %d events", ErrRejected, len(items), n)
			continue
		}
		out[i].EventID = items[i].EventID
		if !items[i].ok() {
			out[i].Err = fmt.Errorf("%w: %s%s", ErrRejected, items[i].Reason, truncate(items[i].Error))
			out[i].Reason = items[i].reason()
		}
	}
	return out
}

// reason names why the gateway refused the item: its reason, else its error's field and rule.
func (b batchItem) reason() string {
	if b.Reason != "" {
		return b.Reason
	}
	var e struct{ Field, Rule string }
	if json.Unmarshal(b.Error, &e) == nil && (e.Field != "" || e.Rule != "") {
		return e.Field + " " + e.Rule
	}
	return ""
}

func (b batchItem) ok() bool {
	if b.Accepted != nil {
		return *b.Accepted
	}
	if len(b.Error) > 0 && string(b.Error) != "null" {
		return false
	}
	s := strings.Trim(string(b.Status), `"`)
	return s == "" || strings.EqualFold(s, "accepted") || strings.HasPrefix(s, "2")
}

// parseBatch accepts a bare array or an object holding the array under results, events or items.
func parseBatch(body []byte) []batchItem {
	var items []batchItem
	if json.Unmarshal(body, &items) == nil {
		return items
	}
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(body, &wrapped) != nil {
		return nil
	}
	for _, k := range []string{"results", "events", "items"} {
		if raw, ok := wrapped[k]; ok && json.Unmarshal(raw, &items) == nil {
			return items
		}
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > maxErrorBody {
		return string(b[:maxErrorBody]) + "..."
	}
	return string(b)
}

// Close releases idle connections.
func (h *HTTP) Close() error {
	h.client.CloseIdleConnections()
	return nil
}
