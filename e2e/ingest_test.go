package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

const projectTimeout = 90 * time.Second

// Events go through the HTTP gateway out of order, with a duplicate and a malformed one; the consumer in `serve`
// projects them; the graph equals the in-order reference; SIGTERM stops cleanly; replay from the archive into an
// emptied scope gives the same graph again.
func TestGatewayToGraphThenReplayFromArchiveGivesSameGraph(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 3)
	api, metrics, archive := freePort(t), freePort(t), filepath.Join(t.TempDir(), "archive")
	srv := start(t, kc, nil, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics, "--archive-dir="+archive)
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)

	shuffled := make([]json.RawMessage, 0, len(events)+2)
	for _, i := range rand.New(rand.NewSource(7)).Perm(len(events)) {
		shuffled = append(shuffled, events[i])
	}
	shuffled = append(shuffled, events[0]) // a duplicate
	shuffled = append(shuffled, json.RawMessage(strings.Replace(string(events[1]), `"eventType":"COMPLETE"`, `"eventType":"DONE"`, 1)))
	body, _ := json.Marshal(shuffled)
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage/batch", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Accepted, Rejected int }
	_ = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if resp.StatusCode != 200 || res.Accepted != len(events)+1 || res.Rejected != 1 {
		t.Fatalf("batch: %d accepted=%d rejected=%d", resp.StatusCode, res.Accepted, res.Rejected)
	}
	waitEvents(t, store, ids, projectTimeout)
	waitCommitted(t, kc, projectTimeout)
	projected := dump(t, store, s)

	m := get(t, "http://"+metrics+"/metrics")
	if !strings.Contains(m, `headwater_gateway_events_total{outcome="accepted"`) || !strings.Contains(m, "headwater_consumer_batch_seconds") {
		t.Fatalf("metrics listener lacks gateway/consumer metrics")
	}
	srv.signal(syscall.SIGTERM)
	if err := srv.wait(t, 30*time.Second); err != nil {
		t.Fatalf("SIGTERM must stop serve cleanly: %v", err)
	}

	want := reference(t, store, s, events, ids, subject)
	if projected != want {
		t.Fatalf("out-of-order + duplicate delivery differs from the in-order reference:\n%s", diff(projected, want))
	}
	erase(t, store, s, ids)
	rp := start(t, kc, nil, "replay", "--dir="+archive)
	if err := rp.wait(t, 60*time.Second); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if got := dump(t, store, s); got != want {
		t.Fatalf("replay from the archive differs:\n%s", diff(got, want))
	}
}

// The consumer is SIGKILLed right after its first batch is committed in Neo4j and before the Kafka offsets are;
// the restarted consumer re-reads that batch and the graph still equals each event applied once.
func TestCrashAfterNeo4jCommitBeforeOffsetCommitLeavesNoDuplicates(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 4)
	produce(t, kc, events)

	arch := filepath.Join(t.TempDir(), "archive")
	crash := start(t, kc, []string{"HEADWATER_TEST_CRASH_AFTER_BATCHES=1", "HEADWATER_CONSUMER_BATCH_SIZE=4"},
		"ingest", "--metrics-addr="+freePort(t), "--archive-dir="+arch)
	err := crash.wait(t, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("want the consumer killed by the failpoint, got %v", err)
	}
	if n := countProjected(t, ids); n == 0 || n == len(ids) {
		t.Fatalf("crash should leave a partial projection, found %d of %d events", n, len(ids))
	}
	start(t, kc, []string{"HEADWATER_CONSUMER_BATCH_SIZE=4"}, "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+arch)
	waitEvents(t, store, ids, projectTimeout)
	waitCommitted(t, kc, projectTimeout)
	got := dump(t, store, s)
	if want := reference(t, store, s, events, ids, ""); got != want {
		t.Fatalf("recovery after the crash differs from each event applied once:\n%s", diff(got, want))
	}
}

// Two consumer instances share the group; the second joins mid-stream (rebalance) and the first is SIGKILLed
// while it holds uncommitted batches; the survivor finishes and the graph is right.
func TestTwoConsumersWithRebalanceAndKillMidBatch(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 12)
	half := len(events) / 2
	env := []string{"HEADWATER_CONSUMER_BATCH_SIZE=3", "HEADWATER_CONSUMER_BATCH_WAIT=50ms"}
	arch := filepath.Join(t.TempDir(), "archive")
	a := start(t, kc, env, "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+arch)
	produce(t, kc, events[:half])
	waitSome(t, ids[:half], 1)
	start(t, kc, env, "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+arch)
	produce(t, kc, events[half:])
	time.Sleep(2 * time.Second) // let the rebalance happen with work in flight
	a.signal(syscall.SIGKILL)
	waitEvents(t, store, ids, 2*projectTimeout)
	waitCommitted(t, kc, 2*projectTimeout)
	got := dump(t, store, s)
	if want := reference(t, store, s, events, ids, ""); got != want {
		t.Fatalf("two consumers with a rebalance and a kill differ from each event applied once:\n%s", diff(got, want))
	}
}

func produce(t *testing.T, kc kafkaio.Config, events [][]byte) {
	t.Helper()
	p, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msgs := make([]kafkaio.Message, len(events))
	for i, e := range events {
		msgs[i] = kafkaio.Message{Topic: kc.EventsTopic, Key: "run:e2e", Value: e}
	}
	if err := p.Send(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
}

func waitSome(t *testing.T, ids []string, min int) {
	t.Helper()
	deadline := time.Now().Add(projectTimeout)
	for time.Now().Before(deadline) {
		if countProjected(t, ids) >= min {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("fewer than %d events projected", min)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// diff shows the lines only in one side, for a readable failure.
func diff(got, want string) string {
	g, w := lineSet(got), lineSet(want)
	var b strings.Builder
	for l := range g {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	for l := range w {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for l := range strings.SplitSeq(s, "\n") {
		m[l] = true
	}
	return m
}

// An event the consumer quarantines (here: over a tightened limit) is recorded as quarantined with the reason;
// after the fix (the limit restored) `headwater redrive` sends it back and it is projected, and re-driving it a
// second time changes nothing.
func TestQuarantinedEventRedrivenAfterFixIsProjectedOnce(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, _ := pipelineEvents(t, s, 1)
	raw := events[1]
	produce(t, kc, [][]byte{raw})
	id := kafkaio.RejectedEventID(raw)
	tight := start(t, kc, []string{"HEADWATER_EVENT_MAX_DATASETS=1"}, "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	reason := waitQuarantined(t, store, id)
	if !strings.Contains(reason, "1") {
		t.Fatalf("quarantine reason should name the limit: %q", reason)
	}
	tight.signal(syscall.SIGTERM)
	_ = tight.wait(t, 30*time.Second)
	start(t, kc, nil, "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	for i := range 2 {
		rd := start(t, kc, nil, "redrive", "--event-id="+id)
		if err := rd.wait(t, 60*time.Second); err != nil {
			t.Fatalf("redrive %d: %v", i, err)
		}
	}
	waitEvents(t, store, []string{id}, projectTimeout)
	waitCommitted(t, kc, projectTimeout)
	if n := countProjected(t, []string{id}); n != 1 {
		t.Fatalf("re-driven event projected %d times", n)
	}
}
