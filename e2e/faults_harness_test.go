package e2e

// The fault suite's harness (faults_test.go, ADR 0048): a producer that retries as the OpenLineage clients do
// (the same bytes, so the same event id, until a 2xx or a refusal), a ledger of every event that got a 2xx and
// every one refused, a readiness watcher that records what /readyz said while a part was down, and the one check
// every fault ends with.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/kafkaio"
)

// faultTimeout bounds every wait of the fault suite for recovery (projection to the end, offsets committed).
const faultTimeout = 2 * time.Minute

// ledger is what the producer knows: the events that got a 2xx (in the order of their first 2xx) and those refused.
type ledger struct {
	mu      sync.Mutex
	acked   map[string]bool
	events  [][]byte
	ids     []string
	refused [][]byte
	retries atomic.Int64
	status  map[int]int // answers by status, 0 for a transport error
}

func newLedger() *ledger { return &ledger{acked: map[string]bool{}, status: map[int]int{}} }

func (l *ledger) ack(raw []byte, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acked[id] { // a retry of an event whose earlier 2xx got lost on the way back never happens here: one 2xx ends the loop
		return
	}
	l.acked[id] = true
	l.events, l.ids = append(l.events, raw), append(l.ids, id)
}

func (l *ledger) answered(status int) {
	l.mu.Lock()
	l.status[status]++
	l.mu.Unlock()
}

func (l *ledger) snapshot() (events [][]byte, ids []string, refused [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.events...), append([]string(nil), l.ids...), append([][]byte(nil), l.refused...)
}

func (l *ledger) statuses() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.status)
}

// olProducer posts one event per request, like the OpenLineage HTTP transport, and retries the same bytes on a
// transport error, a 429 or a 5xx after Retry-After (capped at retryCap so tests stay short) or its own backoff.
type olProducer struct {
	addr   func() string // the gateway to post to now
	token  string
	led    *ledger
	client *http.Client
}

const retryCap = time.Second

func newProducer(addr func() string, token string) *olProducer {
	return &olProducer{addr: addr, token: token, led: newLedger(), client: &http.Client{Timeout: 10 * time.Second}}
}

// send delivers one event until it gets a 2xx (ledgered as acknowledged) or a 4xx other than 429 (refused); it
// fails only when ctx ends first.
func (p *olProducer) send(ctx context.Context, raw []byte, id string) error {
	backoff := 50 * time.Millisecond
	for {
		status, wait, err := p.post(ctx, raw)
		p.led.answered(status)
		switch {
		case err == nil && status/100 == 2:
			p.led.ack(raw, id)
			return nil
		case err == nil && status/100 == 4 && status != http.StatusTooManyRequests:
			p.led.mu.Lock()
			p.led.refused = append(p.led.refused, raw)
			p.led.mu.Unlock()
			return nil
		}
		p.led.retries.Add(1)
		if wait == 0 {
			wait, backoff = backoff, min(2*backoff, retryCap)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("event %s not acknowledged before the deadline (last: status %d, %v)", id, status, err)
		case <-time.After(min(wait, retryCap)):
		}
	}
}

func (p *olProducer) post(ctx context.Context, raw []byte) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.addr()+"/api/v1/lineage", bytes.NewReader(raw))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, time.Duration(secs) * time.Second, nil
}

// readyWatch polls a /readyz and counts what it said: per check, per state; "unreachable" when nothing answered.
type readyWatch struct {
	mu     sync.Mutex
	seen   map[string]map[string]int
	codes  map[int]int
	cancel context.CancelFunc
	done   chan struct{}
}

func watchReady(url string) *readyWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &readyWatch{seen: map[string]map[string]int{}, codes: map[int]int{}, cancel: cancel, done: make(chan struct{})}
	client := &http.Client{Timeout: 3 * time.Second}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			w.poll(ctx, client, url)
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *readyWatch) poll(ctx context.Context, client *http.Client, url string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			w.codes[0]++
		}
		return
	}
	defer resp.Body.Close()
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	w.codes[resp.StatusCode]++
	for c, st := range body.Checks {
		if w.seen[c] == nil {
			w.seen[c] = map[string]int{}
		}
		w.seen[c][st]++
	}
}

func (w *readyWatch) stop() {
	w.cancel()
	<-w.done
}

// reported says whether the watch saw check in a state other than ok.
func (w *readyWatch) reported(check string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for st, n := range w.seen[check] {
		if st != "ok" && n > 0 {
			return true
		}
	}
	return false
}

// mostlyReady says whether at least 90% of the polls answered 200: a part that does not depend on the broken one
// stays ready, bar a check that timed out on a loaded machine (each has obs.ReadinessTimeout, 2 s).
func (w *readyWatch) mostlyReady() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := 0
	for _, n := range w.codes {
		total += n
	}
	return total > 0 && w.codes[http.StatusOK]*10 >= total*9
}

func (w *readyWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("codes %v checks %v", w.codes, w.seen)
}

// waitReadyState waits until /readyz shows check in a state other than ok (down) or ok (!down).
func waitReadyState(t *testing.T, url, check string, down bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			var body struct {
				Checks map[string]string `json:"checks"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if st, ok := body.Checks[check]; ok && (st != "ok") == down {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: check %q did not become down=%v within %s", url, check, down, timeout)
}

// refusedMarker names the output dataset of every event the suite expects the gateway to refuse: none of it may
// reach the graph.
const refusedMarker = "refused/never"

// refusable returns an event the gateway refuses (eventType outside the spec's enum) writing refusedMarker.
func refusable(s scope) []byte {
	return fmt.Appendf(nil, `{"eventType":"DONE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":%q,"name":"refused"},"inputs":[],"outputs":[{"namespace":%q,"name":%q}]}`,
		time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), newUUID(), s.jobNS, s.dsNS, refusedMarker)
}

// withRefusals interleaves n refusable events (id "") into the events.
func withRefusals(s scope, events [][]byte, ids []string, n int) ([][]byte, []string) {
	var oe [][]byte
	var oi []string
	every := max(len(events)/(n+1), 1)
	for i := range events {
		if i%every == every-1 && n > 0 {
			oe, oi, n = append(oe, refusable(s)), append(oi, ""), n-1
		}
		oe, oi = append(oe, events[i]), append(oi, ids[i])
	}
	return oe, oi
}

// assertExactlyOnce is the end of every fault: each acknowledged event is projected (and the group's offsets are
// at the end), the graph of the scope equals applying each acknowledged event once, in-process, and nothing
// refused is in it.
func assertExactlyOnce(t *testing.T, store *graph.Store, kc kafkaio.Config, s scope, led *ledger, principal string) {
	t.Helper()
	events, ids, refused := led.snapshot()
	if len(ids) == 0 {
		t.Fatal("no event was acknowledged")
	}
	waitEvents(t, store, ids, faultTimeout)
	waitCommitted(t, kc, faultTimeout)
	got := dump(t, store, s)
	if strings.Contains(got, refusedMarker) {
		t.Fatalf("a refused event reached the graph:\n%s", got)
	}
	want := reference(t, store, s, events, ids, principal)
	if got != want {
		t.Fatalf("after the fault the graph differs from each of the %d acknowledged events applied once (refused %d, retries %d):\n%s",
			len(ids), len(refused), led.retries.Load(), diff(got, want))
	}
	t.Logf("exactly once: %d acknowledged, %d refused, %d retries; answers %s", len(ids), len(refused), led.retries.Load(), led.statuses())
}
