package gateway_test

import (
	"bytes"
	"compress/flate"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// Only identity and gzip are content codings the gateway reads; anything else is 415, not read as JSON
// (issue 13 item 16).
func TestUnsupportedContentEncodingIs415(t *testing.T) {
	f := newFixture(t, defaults())
	ev := runEvent(uuid.NewString(), "START")
	var deflated bytes.Buffer
	zw, _ := flate.NewWriter(&deflated, flate.DefaultCompression)
	_, _ = zw.Write([]byte(ev))
	_ = zw.Close()
	for _, c := range []struct {
		coding string
		body   []byte
	}{{"br", []byte(ev)}, {"deflate", deflated.Bytes()}, {"compress", []byte(ev)}, {"gzip, br", []byte(ev)}, {"zstd", []byte(ev)}} {
		for _, path := range []string{"/api/v1/lineage", "/api/v1/lineage/batch"} {
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, bytes.NewReader(c.body))
			req.Header.Set("Content-Encoding", c.coding)
			code, _, body := do(t, req)
			if code != http.StatusUnsupportedMediaType {
				t.Fatalf("%s %s: got %d %v, want 415", path, c.coding, code, body)
			}
			if e := body["error"].(map[string]any); e["rule"] != "content-encoding" || e["field"] != "Content-Encoding" {
				t.Fatalf("%s %s: error %v", path, c.coding, e)
			}
			if body["eventId"] != kafkaio.RejectedEventID(c.body) {
				t.Fatalf("%s %s: the refusal is quarantined under the digest of the body as sent, got %v", path, c.coding, body["eventId"])
			}
		}
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/api/v1/lineage", strings.NewReader(ev))
	req.Header.Set("Content-Encoding", "identity")
	if code, _, body := do(t, req); code != http.StatusAccepted {
		t.Fatalf("identity: %d %v", code, body)
	}
}

// Duplicate keys anywhere in an event are refused naming the path: the stored bytes must mean one thing to every
// consumer, and JSON readers disagree on which value wins (issue 13 item 16).
func TestDuplicateKeysAreRefusedNamingThePath(t *testing.T) {
	f := newFixture(t, defaults())
	ev := runEvent(uuid.NewString(), "START")
	cases := []struct{ body, field string }{
		{strings.Replace(ev, `"job":{"namespace":"gw-test",`, `"job":{"namespace":"gw-test","namespace":"other",`, 1), "job.namespace"},
		{strings.Replace(ev, `"inputs":[{"namespace":"postgres://db:5432",`, `"inputs":[{"namespace":"postgres://db:5432","name":"x",`, 1), "inputs[0].name"},
		{strings.Replace(ev, `{"eventType":"START",`, `{"eventType":"START","eventType":"COMPLETE",`, 1), "eventType"},
		{strings.Replace(ev, `"job":{"namespace":"gw-test",`, `"job":{"\u006eamespace":"x","namespace":"gw-test",`, 1), "job.namespace"},
		{strings.Replace(ev, `"run":{`, `"run":{"facets":{"x":{"a":1,"a":2}},`, 1), "run.facets.x.a"},
	}
	for _, c := range cases {
		code, _, body := post(t, f.srv.URL+"/api/v1/lineage", c.body, nil)
		if code != http.StatusBadRequest {
			t.Fatalf("%.80s: got %d %v", c.body, code, body)
		}
		if e := body["error"].(map[string]any); e["rule"] != "duplicate-key" || e["field"] != c.field {
			t.Fatalf("error %v, want duplicate-key at %s", e, c.field)
		}
	}
	wide := `"run":{"facets":{"x":{` // an object with many keys, past the small-object slice
	for i := range 40 {
		wide += `"k` + strings.Repeat("z", i) + `":1,`
	}
	body := strings.Replace(ev, `"run":{`, wide+`"kzzz":2}},`, 1)
	if code, _, b := post(t, f.srv.URL+"/api/v1/lineage", body, nil); code != http.StatusBadRequest || b["error"].(map[string]any)["field"] != "run.facets.x.kzzz" {
		t.Fatalf("wide object: %d %v", code, b)
	}
}

// Nesting beyond the decoder's limit reports max-depth however deep it goes (the standard library's checker gives
// up at 10,000 levels with a syntax error), in one event and in a batch (issue 13 item 16).
func TestNestingBeyondTheLimitReportsMaxDepth(t *testing.T) {
	f := newFixture(t, defaults())
	ev := runEvent(uuid.NewString(), "START")
	for _, n := range []int{70, 10001, 200000} {
		deep := strings.Repeat("[", n) + strings.Repeat("]", n)
		one := strings.Replace(ev, `"run":{`, `"run":{"facets":{"x":`+deep+`},`, 1)
		code, _, body := post(t, f.srv.URL+"/api/v1/lineage", one, nil)
		if code != http.StatusBadRequest || body["error"].(map[string]any)["rule"] != "max-depth" {
			t.Fatalf("depth %d: got %d %v", n, code, body)
		}
		code, _, body = post(t, f.srv.URL+"/api/v1/lineage/batch", "["+one+"]", nil)
		rule := body["error"]
		if rule == nil {
			rule = body["results"].([]any)[0].(map[string]any)["error"]
		}
		if code/100 == 2 && body["accepted"] != 0.0 || rule.(map[string]any)["rule"] != "max-depth" {
			t.Fatalf("batch depth %d: got %d %v", n, code, body)
		}
	}
}

// JSON text must be UTF-8; an escaped lone surrogate means U+FFFD to one reader and an error to another. Both are
// refused naming the string's path (issue 13 item 16).
func TestInvalidUTF8AnywhereIsRefusedNamingThePath(t *testing.T) {
	f := newFixture(t, defaults())
	ev := runEvent(uuid.NewString(), "START")
	cases := []struct{ body, field string }{
		{strings.Replace(ev, `"run":{`, "\"run\":{\"facets\":{\"x\":{\"v\":\"a\xffb\"}},", 1), "run.facets.x.v"},
		{strings.Replace(ev, `"run":{`, `"run":{"facets":{"x":{"v":"a\ud800b"}},`, 1), "run.facets.x.v"},
		{strings.Replace(ev, `"run":{`, `"run":{"facets":{"x":{"v":"\udc00"}},`, 1), "run.facets.x.v"},
		{strings.Replace(ev, `"run":{`, "\"run\":{\"facets\":{\"k\xc3\":1},", 1), "run.facets.k\uFFFD"},
	}
	for _, c := range cases {
		code, _, body := post(t, f.srv.URL+"/api/v1/lineage", c.body, nil)
		if code != http.StatusBadRequest {
			t.Fatalf("%q: got %d %v", c.field, code, body)
		}
		if e := body["error"].(map[string]any); e["rule"] != "utf8" || e["field"] != c.field {
			t.Fatalf("error %v, want utf8 at %q", e, c.field)
		}
	}
	pair := strings.Replace(ev, `"run":{`, `"run":{"facets":{"x":{"v":"\ud83d\ude00 ok"}},`, 1)
	if code, _, body := post(t, f.srv.URL+"/api/v1/lineage", pair, nil); code != http.StatusAccepted {
		t.Fatalf("a surrogate pair is valid: %d %v", code, body)
	}
}

// Invalid text after a string with escapes was let through (the token walk unescapes in place, so its offsets
// lag the bytes; ADR 0037): the single pass refuses it like any other, as utf8. The walk cannot place it, so the
// field is the document.
func TestInvalidUTF8AfterEscapedStringsIsRefused(t *testing.T) {
	f := newFixture(t, defaults())
	ev := runEvent(uuid.NewString(), "START")
	escaped := `"run":{"facets":{"sql":{"query":"` + strings.Repeat(`select \"a\" from \"t\"\n`, 20) + `"}},`
	for _, tail := range []string{`"outputs":[],"z\ud800":1`, "\"outputs\":[],\"z\":\"\xff\""} {
		body := strings.Replace(strings.Replace(ev, `"run":{`, escaped, 1), `"outputs":[]`, tail, 1)
		code, _, b := post(t, f.srv.URL+"/api/v1/lineage", body, nil)
		if code != http.StatusBadRequest {
			t.Fatalf("%q: got %d %v, want 400", tail, code, b)
		}
		if e := b["error"].(map[string]any); e["rule"] != "utf8" || e["field"] != "$" {
			t.Fatalf("%q: error %v, want utf8 at $", tail, e)
		}
	}
}
