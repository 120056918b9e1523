package resolvers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/resolvers/guard"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
)

// recordingAuditor keeps audit records in memory (the token manager requires an auditor; audit is not under test).
type recordingAuditor struct {
	mu   sync.Mutex
	recs []audit.AuditRecord
}

func (a *recordingAuditor) Audit(_ context.Context, r audit.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

// noManagers grants MANAGE_GRANTS to nobody: a principal may still create its own user tokens.
type noManagers struct{}

func (noManagers) CanOn(context.Context, authz.Principal, authz.Privilege, grant.Securable) bool {
	return false
}

// TestCallerMistakesAreBadRequest: issue 13 item 15. Each request below is the caller's to fix; each must answer
// BAD_REQUEST with a message naming what is wrong, never INTERNAL or UNAVAILABLE.
func TestCallerMistakesAreBadRequest(t *testing.T) {
	h := newHarness(t, func(d *testDeps) {
		d.Tokens = apitoken.NewManager(apitoken.NewStore(d.Store, d.Clock), noManagers{}, &recordingAuditor{}, d.Clock)
	})
	h.fx.Job("j")
	vars := map[string]any{"ns": h.fx.NS}
	cases := []struct {
		name, query string
		vars        map[string]any
		inMessage   string
	}{
		{"runs after an offset past any list", `query($ns: String!) { job(namespace: $ns, name: "j") { runs(after: "o:9223372036854775807") { hasNextPage } } }`,
			vars, "after"},
		{"lineage asOf not a time (literal)", `{ lineage(start: {dataset: {namespace: "x", name: "y"}}, asOf: "soon") { truncated } }`,
			nil, "asOf"},
		{"lineage asOf not a time (variable)", `query($t: Time) { lineage(start: {dataset: {namespace: "x", name: "y"}}, asOf: $t) { truncated } }`,
			map[string]any{"t": "soon"}, "asOf"},
		{"token expiring in the past", `mutation($t: Time) { createApiToken(input: {owner: "alice", expiresAt: $t}) { token } }`,
			map[string]any{"t": h.fx.Now.Add(-time.Hour).Format(time.RFC3339)}, "expiresAt"},
	}
	var last struct {
		Job struct{ Runs struct{ HasNextPage bool } }
	}
	if errs := h.query("", `query($ns: String!) { job(namespace: $ns, name: "j") { runs(after: "o:2147483647") { hasNextPage } } }`, vars, &last); len(errs) != 0 {
		t.Errorf("the largest offset cursor: %+v", errs)
	}
	for _, c := range cases {
		errs := h.query("", c.query, c.vars, nil)
		if len(errs) != 1 || errs[0].code() != guard.CodeBadRequest || !strings.Contains(errs[0].Message, c.inMessage) {
			t.Errorf("%s: errors %+v; want one BAD_REQUEST naming %s", c.name, errs, c.inMessage)
		}
	}
}

func TestBatchedRequestIsBadRequest(t *testing.T) {
	h := newHarness(t)
	status, r := h.postRaw(strings.NewReader(`[{"query":"{ __typename }"},{"query":"{ __typename }"}]`), -1, "")
	if status != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest ||
		!strings.Contains(r.Errors[0].Message, "batched") {
		t.Fatalf("status %d errors %+v", status, r.Errors)
	}
	status, r = h.postRaw(strings.NewReader(`{"query": 5}`), -1, "")
	if status != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest || strings.Contains(r.Errors[0].Message, "{") {
		t.Fatalf("undecodable body: status %d errors %+v", status, r.Errors)
	}
}

func TestUnsupportedTransportIsBadRequest(t *testing.T) {
	h := newHarness(t)
	resp, err := http.Post(h.srv.URL, "text/plain", strings.NewReader(`{ __typename }`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r gqlResponse
	_ = json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != http.StatusUnsupportedMediaType || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest {
		t.Fatalf("status %d errors %+v", resp.StatusCode, r.Errors)
	}
}

func TestPersistedQueryHashMismatchIsBadRequest(t *testing.T) {
	h := newHarness(t)
	q := `{ __typename }`
	other := sha256.Sum256([]byte("{ other }"))
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(other[:]) + `"}}`
	r := h.get(url.Values{"query": {q}, "extensions": {ext}})
	if len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest || !strings.Contains(r.Errors[0].Message, "hash") {
		t.Fatalf("GET: %+v", r.Errors)
	}
	body := `{"query":"{ __typename }","extensions":` + ext + `}`
	if _, r := h.postRaw(strings.NewReader(body), -1, ""); len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeBadRequest {
		t.Fatalf("POST: %+v", r.Errors)
	}
	// the refused document was not registered under the wrong hash
	r = h.get(url.Values{"extensions": {ext}})
	if len(r.Errors) != 1 || r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("hash only: %+v", r.Errors)
	}
}

// TestConcurrentRequestsArePerPrincipal holds a principal's slots with requests whose bodies are still arriving:
// its next request is refused with 429 and RATE_LIMITED, another principal is served, and the slots free up.
func TestConcurrentRequestsArePerPrincipal(t *testing.T) {
	const limit = 2
	h := newHarness(t, func(d *testDeps) { d.Limits.MaxConcurrent = limit })
	body := queryBody("{ __typename }")
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server's Close, which waits for held requests
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for { // a held request that met the probes' slot is refused: send it again
				status, r := h.postRaw(slowBody(body, release), int64(len(body)), "mallory")
				if status == http.StatusTooManyRequests {
					continue
				}
				if status != http.StatusOK || len(r.Errors) != 0 {
					t.Errorf("held request: %d %+v", status, r.Errors)
				}
				return
			}
		})
	}
	waitFor(t, func() bool {
		status, _ := h.postRaw(bytes.NewReader(body), int64(len(body)), "mallory")
		return status == http.StatusTooManyRequests
	})
	status, r := h.postRaw(bytes.NewReader(body), int64(len(body)), "mallory")
	if status != http.StatusTooManyRequests || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeRateLimited {
		t.Errorf("over the limit: %d %+v", status, r.Errors)
	}
	if status, r := h.postRaw(bytes.NewReader(body), int64(len(body)), "bob"); status != http.StatusOK || len(r.Errors) != 0 {
		t.Errorf("another principal: %d %+v", status, r.Errors)
	}
	// The refusal of a request whose body is still arriving does not wait for the body (net/http reads the rest
	// of an unread body before answering unless the connection closes): it failed, and so did the wait above
	// whenever a held request met a probe's slot, before refusals closed the connection.
	pr, pw := io.Pipe() // never written: only the body's first byte arrives, until the body gives up after 10 s
	giveUp := time.AfterFunc(10*time.Second, func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL, io.MultiReader(bytes.NewReader(body[:1]), pr))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(principalHeader, "mallory")
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	if !giveUp.Stop() {
		t.Errorf("a refused request with its body still arriving was answered only when its body ended: %v", err)
	}
	_ = pw.Close()
	if err != nil {
		t.Errorf("a refused request with its body still arriving: %v", err)
	} else {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || !resp.Close {
			t.Errorf("a refused request with its body still arriving: %d, connection closes %v", resp.StatusCode, resp.Close)
		}
	}
	free()
	wg.Wait()
	if status, r := h.postRaw(bytes.NewReader(body), int64(len(body)), "mallory"); status != http.StatusOK || len(r.Errors) != 0 {
		t.Errorf("after release: %d %+v", status, r.Errors)
	}
}

// slowBody sends the first byte of body at once and the rest when release closes. A body the server does not
// read (the request was refused) is abandoned: its writer returns when the client closes the pipe.
func slowBody(body []byte, release <-chan struct{}) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		if _, err := pw.Write(body[:1]); err != nil {
			return
		}
		<-release
		_, _ = pw.Write(body[1:])
		_ = pw.Close()
	}()
	return pr
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInFlightRequestsAreBoundedAcrossPrincipals fills the process's in-flight slots with requests of two
// principals, each within its own limit, whose bodies are still arriving: a third principal's request waits the
// queue wait and is refused with 503, UNAVAILABLE and Retry-After, before its body is read; the refusal and the
// held slots show in the metrics; a request that finds a slot freed within the queue wait is served.
func TestInFlightRequestsAreBoundedAcrossPrincipals(t *testing.T) {
	const limit = 2
	h := newHarness(t, func(d *testDeps) {
		d.Limits.MaxInFlight = limit
		d.Limits.QueueWait = 2 * time.Second // long enough for the freed slots below under a loaded CI machine
	})
	body := queryBody("{ __typename }")
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			for { // a held request that met a probe's slot is refused: send it again
				status, r := h.postRaw(slowBody(body, release), int64(len(body)), who)
				if status == http.StatusServiceUnavailable {
					continue
				}
				if status != http.StatusOK || len(r.Errors) != 0 {
					t.Errorf("held request of %s: %d %+v", who, status, r.Errors)
				}
				return
			}
		})
	}
	waitFor(t, func() bool { return gaugeOf(t, h.reg, "headwater_graphql_in_flight") == limit })
	status, header, r := h.postRawHeaders(bytes.NewReader(body), int64(len(body)), "carol")
	if retryAfter := header.Get("Retry-After"); status != http.StatusServiceUnavailable || retryAfter != "1" || len(r.Errors) != 1 || r.Errors[0].code() != guard.CodeUnavailable {
		t.Fatalf("over the process's limit: %d Retry-After %q %+v", status, header.Get("Retry-After"), r.Errors)
	}
	if !strings.Contains(r.Errors[0].Message, "limit of 2 GraphQL requests") {
		t.Errorf("refusal message names no limit: %q", r.Errors[0].Message)
	}
	if n := refusalsOf(t, h.reg, "max-in-flight"); n < 1 {
		t.Errorf("headwater_graphql_refused_total{rule=max-in-flight} = %v, want at least 1", n)
	}
	// A slot freed while a request waits serves it: free the held ones shortly after carol's second request.
	go func() { time.Sleep(50 * time.Millisecond); free() }()
	if status, r := h.postRaw(bytes.NewReader(body), int64(len(body)), "carol"); status != http.StatusOK || len(r.Errors) != 0 {
		t.Errorf("a slot freed within the queue wait: %d %+v", status, r.Errors)
	}
	wg.Wait()
	waitFor(t, func() bool { return gaugeOf(t, h.reg, "headwater_graphql_in_flight") == 0 })
}

// gaugeOf reads an unlabelled gauge (-1: not registered).
func gaugeOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	v, ok := metricOf(t, reg, name, "", "")
	if !ok {
		return -1
	}
	return v.GetGauge().GetValue()
}

// refusalsOf reads headwater_graphql_refused_total for one rule.
func refusalsOf(t *testing.T, reg *prometheus.Registry, rule string) float64 {
	t.Helper()
	v, _ := metricOf(t, reg, "headwater_graphql_refused_total", "rule", rule)
	return v.GetCounter().GetValue()
}

// metricOf finds the series of family name whose label has value (label "": the family's only series).
func metricOf(t *testing.T, reg *prometheus.Registry, name, label, value string) (*dto.Metric, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label == "" && len(mf.GetMetric()) == 1 {
				return m, true
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m, true
				}
			}
		}
	}
	return nil, false
}
