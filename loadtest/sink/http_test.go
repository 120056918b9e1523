package sink

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

func events(n int) []gen.Event {
	out := make([]gen.Event, n)
	for i := range out {
		out[i] = gen.Event{Body: []byte(`{"eventType":"START"}`), Key: "run:ns/job"}
	}
	return out
}

func newTestHTTP(url string, batch bool) *HTTP {
	h := NewHTTP(HTTPConfig{BaseURL: url, Token: "tok", Batch: batch, MaxAttempts: 3})
	h.sleep = func(context.Context, time.Duration) error { return nil }
	return h
}

func TestSingleRetriesAfter429(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathSingle || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("path %s auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"eventId":"e-1"}`)
	}))
	defer srv.Close()
	res, err := newTestHTTP(srv.URL, false).Send(context.Background(), events(1))
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Err != nil || r.EventID != "e-1" || r.Attempts != 2 || r.Throttled != 1 || r.Status != http.StatusAccepted {
		t.Fatalf("got %+v", r)
	}
}

func TestSingleGivesUpWhenStillThrottled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	res, err := newTestHTTP(srv.URL, false).Send(context.Background(), events(1))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, ErrThrottled) || res[0].Attempts != 3 {
		t.Fatalf("got %+v", res[0])
	}
}

func TestBatchAnswersPerEvent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in []json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in) != 2 || r.URL.Path != PathBatch {
			t.Errorf("batch body: %v, %d events, path %s", err, len(in), r.URL.Path)
		}
		w.WriteHeader(http.StatusMultiStatus)
		_, _ = io.WriteString(w, `{"results":[{"eventId":"a","status":"accepted"},{"status":"rejected","error":{"field":"run.runId","rule":"uuid"}}]}`)
	}))
	defer srv.Close()
	res, err := newTestHTTP(srv.URL, true).Send(context.Background(), events(2))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].EventID != "a" {
		t.Errorf("first: %+v", res[0])
	}
	if !errors.Is(res[1].Err, ErrRejected) {
		t.Errorf("second: %+v", res[1])
	}
}

func TestRejectedNamesStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"field":"eventTime"}`)
	}))
	defer srv.Close()
	res, _ := newTestHTTP(srv.URL, false).Send(context.Background(), events(1))
	if !errors.Is(res[0].Err, ErrRejected) || res[0].Status != http.StatusBadRequest {
		t.Fatalf("got %+v", res[0])
	}
}

func TestRetryAfterParsing(t *testing.T) {
	cases := map[string]time.Duration{"3": 3 * time.Second, "": defaultRetryAfter, "junk": defaultRetryAfter, "9999": maxRetryAfter}
	for in, want := range cases {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}
