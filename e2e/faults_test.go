package e2e

// The fault suite (issue 22, ADR 0048, docs/operations.md): each test runs the real binary against the real
// servers, sends events through the gateway with a producer that retries as the OpenLineage clients do, breaks
// one part in the middle, and ends with assertExactlyOnce: the graph equals each acknowledged event applied once,
// nothing refused is in it, and recovery needed no manual step. Each also checks what readiness said meanwhile.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"golang.org/x/sys/unix"

	"github.com/headwater-data/headwater/authn/apitoken"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

// sendAsync runs the burst in the background; the returned function waits for it and fails the test on an error.
func sendAsync(t *testing.T, p *olProducer, events [][]byte, ids []string, workers int) func() {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- p.burstErr(events, ids, workers) }()
	return func() {
		t.Helper()
		if err := <-errc; err != nil {
			t.Fatalf("producer: %v (answers %s)", err, p.led.statuses())
		}
	}
}

// waitAcked waits until the ledger holds at least n acknowledged events.
func waitAcked(t *testing.T, led *ledger, n int) {
	t.Helper()
	deadline := time.Now().Add(faultTimeout)
	for time.Now().Before(deadline) {
		led.mu.Lock()
		k := len(led.ids)
		led.mu.Unlock()
		if k >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fewer than %d events acknowledged within %s", n, faultTimeout)
}

// The gateway (serve) is SIGKILLed twice during a burst from eight concurrent producers and restarted on the same
// address: a request in flight at the kill may have reached Kafka without its 2xx reaching the producer, which
// sends it again under the same id. While the gateway is down its readiness does not answer; the projector's
// (another process) stays ready.
func TestFaultGatewayKilledDuringBurst(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 30)
	events, ids = withRefusals(s, events, ids, 5)
	consMetrics := freePort(t)
	start(t, kc, nil, "ingest", "--metrics-addr="+consMetrics, "--archive-dir="+t.TempDir())
	api := freePort(t)
	gwArgs := []string{"serve", "--no-consumer", "--http-addr=" + api, "--http-metrics-addr=" + freePort(t)}
	gw := start(t, kc, nil, gwArgs...)
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	waitHTTP(t, "http://"+consMetrics+"/readyz", 60*time.Second)
	gwWatch, consWatch := watchReady("http://"+api+"/readyz"), watchReady("http://"+consMetrics+"/readyz")

	p := newProducer(func() string { return api }, token)
	wait := sendAsync(t, p, events, ids, 8)
	for _, at := range []int{len(events) / 4, len(events) / 2} {
		waitAcked(t, p.led, at)
		gw.signal(syscall.SIGKILL)
		_ = gw.wait(t, 10*time.Second)
		time.Sleep(time.Second) // producers see connection errors and retry
		gw = start(t, kc, nil, gwArgs...)
		waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	}
	wait()
	gwWatch.stop()
	consWatch.stop()
	if gwWatch.codes[0] == 0 {
		t.Fatalf("the gateway's readiness answered throughout its outage: %s", gwWatch)
	}
	assertExactlyOnce(t, store, kc, s, p.led, subject)
	if !consWatch.mostlyReady() {
		t.Fatalf("the projector's readiness must not depend on the gateway: %s", consWatch)
	}
}

// The projector (ingest) dies five ways while events stream in through a gateway that stays up: by a failpoint
// as its very first batch is about to be projected (no replay point exists yet: only the rule that offsets are
// committed after the Neo4j commit re-delivers it); by the failpoint right after a Neo4j commit and before the
// offset commit; by SIGKILL at a random moment of a run of small
// transactions (mid-batch: a transaction open, fold state in memory not yet saved write-behind); by SIGKILL a few
// milliseconds after SIGTERM (mid the shutdown save of the fold state and the replay points). Each restart
// rewinds to the replay points. The gateway's readiness stays ready throughout: it needs no projector.
func TestFaultProjectorKilledMidBatchAndMidSave(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 40)
	events, ids = withRefusals(s, events, ids, 3)
	api := freePort(t)
	start(t, kc, nil, "serve", "--no-consumer", "--http-addr="+api, "--http-metrics-addr="+freePort(t))
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	gwWatch := watchReady("http://" + api + "/readyz")
	arch := t.TempDir()
	small := []string{"HEADWATER_CONSUMER_BATCH_SIZE=8", "HEADWATER_CONSUMER_TX_MAX_EVENTS=8", "HEADWATER_CONSUMER_BATCH_WAIT=20ms"}
	ingest := func(extra ...string) *proc {
		return start(t, kc, append(append([]string(nil), small...), extra...), "ingest", "--metrics-addr="+freePort(t), "--archive-dir="+arch)
	}

	p := newProducer(func() string { return api }, token)
	wait := sendAsync(t, p, events, ids, 2)
	waitAcked(t, p.led, len(events)/5)
	for _, failpoint := range []string{"HEADWATER_TEST_CRASH_BEFORE_BATCH=1", "HEADWATER_TEST_CRASH_AFTER_BATCHES=2"} {
		crash := ingest(failpoint)
		if err := crash.wait(t, 60*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("want the projector killed by the failpoint %s, got %v", failpoint, err)
		}
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for round := range 3 {
		_, acked, _ := p.led.snapshot()
		before := countProjected(t, acked)
		pr := ingest()
		if before < len(acked) {
			waitSome(t, acked, before+1) // it is projecting
		} // else every acknowledged event is projected already (a fast projector): the kill lands on an idle one
		time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
		if round == 2 {
			pr.signal(syscall.SIGTERM) // the session ends: the fold state and replay points are being saved
			time.Sleep(time.Duration(5+rng.Intn(40)) * time.Millisecond)
		}
		pr.signal(syscall.SIGKILL)
		_ = pr.wait(t, 10*time.Second)
	}
	ingest()
	wait()
	gwWatch.stop()
	assertExactlyOnce(t, store, kc, s, p.led, subject)
	if !gwWatch.mostlyReady() {
		t.Fatalf("the gateway's readiness must not depend on the projector: %s", gwWatch)
	}
}

// Redis is killed while queries and ingestion run against one serve, and started again: readiness stays 200 and
// names redis as degraded meanwhile, no query fails, every acknowledged event is projected once, and after Redis
// is back an edge written then is served at once (the cache epoch was bumped; nothing stale).
func TestFaultRedisStoppedDuringQueriesAndIngest(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	redisAddr := freePort(t)
	redis := startRedis(t, redisAddr)
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_REDIS_ADDR=" + redisAddr}, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t),
		"--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	events, ids := pipelineEvents(t, s, 20)
	events, ids = withRefusals(s, events, ids, 3)
	p := newProducer(func() string { return api }, token)
	if err := p.burstErr(events[:6], ids[:6], 2); err != nil {
		t.Fatal(err)
	}
	_, first, _ := p.led.snapshot()
	waitEvents(t, store, first, faultTimeout)

	var queries, failed atomic.Int64
	var lastErr atomic.Value
	qctx, stopQueries := context.WithCancel(context.Background())
	var qwg sync.WaitGroup
	qwg.Go(func() {
		for qctx.Err() == nil {
			if _, err := queryDownstream(api, s); err != nil && qctx.Err() == nil {
				failed.Add(1)
				lastErr.Store(err.Error())
			}
			queries.Add(1)
		}
	})
	watch := watchReady("http://" + api + "/readyz")
	wait := sendAsync(t, p, events[6:], ids[6:], 2)
	time.Sleep(time.Second)
	_ = redis.Process.Kill()
	_ = redis.Wait()
	waitReadyState(t, "http://"+api+"/readyz", "redis", true, 30*time.Second)
	time.Sleep(3 * time.Second) // queries and ingestion go on without the cache
	startRedis(t, redisAddr)
	waitReadyState(t, "http://"+api+"/readyz", "redis", false, 30*time.Second)
	wait()
	extra, extraIDs := extraEdge(t, s)
	if err := p.burstErr(extra, extraIDs, 1); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, store, extraIDs, faultTimeout)
	names, err := queryDownstream(api, s)
	if err != nil || !contains(names, "mart/extra") {
		t.Fatalf("after Redis came back an edge written then must be served: %v %v", names, err)
	}
	stopQueries()
	qwg.Wait()
	watch.stop()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d queries failed while Redis was down (last: %v)", failed.Load(), queries.Load(), lastErr.Load())
	}
	if !watch.reported("redis") || !watch.mostlyReady() {
		t.Fatalf("readiness must stay 200 and name redis as degraded: %s", watch)
	}
	t.Logf("%d queries, none failed", queries.Load())
	assertExactlyOnce(t, store, kc, s, p.led, subject)
}

// queryDownstream is downstream without a *testing.T: the dataset names downstream of src/orders, or the error.
func queryDownstream(api string, s scope) ([]string, error) {
	q := `query($ns: String!) { lineage(start: {dataset: {namespace: $ns, name: "src/orders"}}, direction: DOWNSTREAM, depth: 5) { nodes { __typename ... on Dataset { name } } } }`
	body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"ns": s.dsNS}})
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(authed(req))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Lineage struct {
				Nodes []struct {
					Typename string `json:"__typename"`
					Name     string `json:"name"`
				} `json:"nodes"`
			} `json:"lineage"`
		} `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, out.Errors[0])
	}
	var names []string
	for _, n := range out.Data.Lineage.Nodes {
		if n.Typename == "Dataset" {
			names = append(names, n.Name)
		}
	}
	sortStrings(names)
	return names, nil
}

// archiveFullBytes is the file size limit the archive-full test puts on the projector: a few batches fit.
const archiveFullBytes = 12 << 10

// The projector's archive disk fills (a file size limit set on the running process with prlimit: writes past it
// fail with EFBIG as on a full disk) while events stream in, and is freed again (the limit lifted). Meanwhile its
// readiness names the archive, nothing more is projected (the consumer projects only what it archived) and the
// gateway keeps acknowledging. Afterwards the graph is right, and a replay of the archive into an emptied scope
// gives the same graph: no torn write was left in the middle of a segment.
func TestFaultArchiveDiskFullThenFreed(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 40)
	api := freePort(t)
	start(t, kc, nil, "serve", "--no-consumer", "--http-addr="+api, "--http-metrics-addr="+freePort(t))
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	arch, consMetrics := t.TempDir(), freePort(t)
	cons := start(t, kc, []string{"HEADWATER_CONSUMER_BATCH_SIZE=8", "HEADWATER_CONSUMER_TX_MAX_EVENTS=8"},
		"ingest", "--metrics-addr="+consMetrics, "--archive-dir="+arch)
	waitHTTP(t, "http://"+consMetrics+"/readyz", 60*time.Second)
	setFileSizeLimit(t, cons.cmd.Process.Pid, archiveFullBytes)

	p := newProducer(func() string { return api }, token)
	if err := p.burstErr(events, ids, 2); err != nil {
		t.Fatal(err)
	}
	waitReadyState(t, "http://"+consMetrics+"/readyz", "archive", true, faultTimeout)
	stuck := countProjected(t, ids)
	time.Sleep(3 * time.Second)
	if n := countProjected(t, ids); n != stuck || n == len(ids) {
		t.Fatalf("with the archive full the projector must stop: %d then %d of %d projected", stuck, n, len(ids))
	}
	setFileSizeLimit(t, cons.cmd.Process.Pid, unix.RLIM_INFINITY)
	waitReadyState(t, "http://"+consMetrics+"/readyz", "archive", false, faultTimeout)
	assertExactlyOnce(t, store, kc, s, p.led, subject)
	want := dump(t, store, s)

	cons.signal(syscall.SIGTERM)
	_ = cons.wait(t, 30*time.Second)
	_, acked, _ := p.led.snapshot()
	erase(t, store, s, acked)
	rp := start(t, kc, nil, "replay", "--dir="+arch)
	if err := rp.wait(t, 60*time.Second); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if got := dump(t, store, s); got != want {
		t.Fatalf("a replay of the archive written across the full disk differs:\n%s", diff(got, want))
	}
}

// setFileSizeLimit sets RLIMIT_FSIZE (soft; the hard limit stays unlimited) of a running process.
func setFileSizeLimit(t *testing.T, pid int, limit uint64) {
	t.Helper()
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: unix.RLIM_INFINITY}, nil); err != nil {
		t.Fatalf("prlimit %d: %v", pid, err)
	}
}

// A transaction holds the write lock of a hub dataset (clean/orders, which every run writes or reads) for four
// times the projector's transaction timeout while events that touch it stream in. The projector's transactions
// time out waiting; an event whose transaction timed out alone is retried, not quarantined; once the lock is
// released everything is projected once. Neo4j stays ready: it is slow for these nodes, not down.
func TestFaultNeo4jLockOnHubLongerThanTxTimeout(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	const txTimeout = 2 * time.Second
	events, ids := pipelineEvents(t, s, 8)
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_NEO4J_QUERY_TIMEOUT=" + txTimeout.String(), "HEADWATER_CONSUMER_BATCH_SIZE=6",
		"HEADWATER_CONSUMER_TX_MAX_EVENTS=6"}, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t),
		"--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	p := newProducer(func() string { return api }, token)
	if err := p.burstErr(events[:12], ids[:12], 1); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, store, ids[:12], faultTimeout)

	ctx := context.Background()
	sess := store.Session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	tx, err := sess.BeginTransaction(ctx, neo4j.WithTxTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Run(ctx, `MATCH (d:Dataset) WHERE d.namespace STARTS WITH $dp AND d.name ENDS WITH 'clean/orders'
		SET d.faultLock = true RETURN count(d) AS n`, map[string]any{"dp": s.dsNS})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := res.Single(ctx); err != nil || rec.Values[0].(int64) != 1 {
		t.Fatalf("lock the hub: %v %v", rec, err)
	}
	watch := watchReady("http://" + api + "/readyz")
	wait := sendAsync(t, p, events[12:], ids[12:], 2)
	time.Sleep(4 * txTimeout)
	if n := countProjected(t, ids[12:]); n == len(ids)-12 {
		t.Fatalf("the lock on the hub held nothing back (%d projected)", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wait()
	assertExactlyOnce(t, store, kc, s, p.led, subject)
	watch.stop()
	if !watch.mostlyReady() {
		t.Fatalf("a held lock is not an outage: readiness must stay ready: %s", watch)
	}
	_, acked, _ := p.led.snapshot()
	if q := countQuarantined(t, acked); q > 0 {
		t.Fatalf("%d acknowledged events were quarantined because a lock outlived their transaction", q)
	}
}

// countQuarantined counts how many of the ids have a Quarantined node.
func countQuarantined(t *testing.T, ids []string) int {
	t.Helper()
	store := testenv.Store(t)
	res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
		"MATCH (q:Quarantined) WHERE q.key IN $keys RETURN count(q) AS n", map[string]any{"keys": eventKeys(ids)},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
	if err != nil {
		t.Fatal(err)
	}
	return int(res.Records[0].Values[0].(int64))
}

// privateKafkaPort is the broker port of the fault suite's own Kafka (its controller listens on the next port):
// the shared broker on 9092 is never restarted. HEADWATER_FAULT_KAFKA_PORT moves it (two suites on one machine).
var privateKafkaPort = envOr("HEADWATER_FAULT_KAFKA_PORT", "9292")

// privateKafka starts a Kafka broker of this test's own through scripts/stack/stack.sh (jars shared with the
// repository's .state) and returns the repository and its state directory; the broker is killed at test end.
func privateKafka(t *testing.T) (repo, state string) {
	t.Helper()
	repo, state = mustAbs(t, ".."), t.TempDir()
	jars := filepath.Join(repo, ".state", "jars")
	if err := os.MkdirAll(jars, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jars, filepath.Join(state, "jars")); err != nil {
		t.Fatal(err)
	}
	stackUp(t, repo, state)
	t.Cleanup(func() { killPidFile(filepath.Join(state, "kafka", "kafka.pid"), syscall.SIGKILL) })
	return repo, state
}

func stackUp(t *testing.T, repo, state string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, "scripts", "stack", "stack.sh"), "up")
	cmd.Env = append(os.Environ(), "HEADWATER_STATE_DIR="+state, "HEADWATER_STACK_ONLY=kafka",
		"HEADWATER_KAFKA_PORT="+privateKafkaPort, "HEADWATER_STACK_TIMEOUT=120")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("private kafka: %v\n%s", err, out)
	}
}

func killPidFile(path string, sig syscall.Signal) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
		_ = syscall.Kill(pid, sig)
	}
}

// The Kafka broker (a private one) is SIGKILLed during ingestion and started again on the same data: meanwhile
// the gateway answers 503 with Retry-After (the producer retries), readiness names kafka, and afterwards every
// acknowledged event is projected once, with no restart of Headwater.
func TestFaultKafkaBrokerRestartDuringIngest(t *testing.T) {
	store := testenv.Store(t)
	repo, state := privateKafka(t)
	kc := testenv.KafkaConfig(t) // topic names and settings; the topics are created on the private broker by serve
	kc.Brokers = []string{"127.0.0.1:" + privateKafkaPort}
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 30)
	events, ids = withRefusals(s, events, ids, 3)
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_KAFKA_PRODUCE_TIMEOUT=3s"}, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t),
		"--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 90*time.Second)
	watch := watchReady("http://" + api + "/readyz")
	p := newProducer(func() string { return api }, token)
	wait := sendAsync(t, p, events, ids, 2)
	waitAcked(t, p.led, len(events)/3)
	killPidFile(filepath.Join(state, "kafka", "kafka.pid"), syscall.SIGKILL)
	waitReadyState(t, "http://"+api+"/readyz", "kafka", true, 30*time.Second)
	time.Sleep(2 * time.Second)
	stackUp(t, repo, state)
	wait()
	watch.stop()
	if !watch.reported("kafka") {
		t.Fatalf("readiness did not name kafka while the broker was down: %s", watch)
	}
	p.led.mu.Lock()
	unavailable := p.led.status[http.StatusServiceUnavailable] + p.led.status[0]
	p.led.mu.Unlock()
	if unavailable == 0 {
		t.Fatalf("no request was refused while the broker was down: %s", p.led.statuses())
	}
	assertExactlyOnce(t, store, kc, s, p.led, subject)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// errStopped is returned by burstErr when its deadline passes.
var errStopped = errors.New("burst stopped")

// burstErr is burst without a *testing.T, for use from other goroutines.
func (p *olProducer) burstErr(events [][]byte, ids []string, workers int) error {
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	next := make(chan int)
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := p.send(ctx, events[i], ids[i]); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range events {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return fmt.Errorf("%w: %w", errStopped, first)
	}
	return nil
}

// privateNeo4jPort is the Bolt port of the fault suite's own Neo4j: the shared one on 7687 is never restarted.
// HEADWATER_FAULT_NEO4J_PORT moves it.
var privateNeo4jPort = envOr("HEADWATER_FAULT_NEO4J_PORT", "7887")

// startPrivateNeo4j starts (or restarts, on its data) a Neo4j of the test's own through scripts/stack/stack.sh.
func startPrivateNeo4j(t *testing.T, repo, state string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, "scripts", "stack", "stack.sh"), "up")
	cmd.Env = append(os.Environ(), "HEADWATER_STATE_DIR="+state, "HEADWATER_STACK_ONLY=neo4j",
		"HEADWATER_NEO4J_BOLT_PORT="+privateNeo4jPort, "HEADWATER_STACK_TIMEOUT=180")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("private neo4j: %v\n%s", err, out)
	}
}

// Neo4j (a private one) is SIGKILLed while the projector is in the middle of a run of small transactions and
// started again on its data: meanwhile readiness names neo4j, the projector retries the same transaction (nothing
// marked, nothing quarantined) and the gateway keeps acknowledging; afterwards every acknowledged event is
// projected once, with no restart of Headwater.
func TestFaultNeo4jRestartDuringProjection(t *testing.T) {
	repo, state := mustAbs(t, ".."), t.TempDir()
	jars := filepath.Join(repo, ".state", "jars")
	if err := os.MkdirAll(jars, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jars, filepath.Join(state, "jars")); err != nil {
		t.Fatal(err)
	}
	startPrivateNeo4j(t, repo, state)
	pidFile := filepath.Join(state, "neo4j", "neo4j.pid")
	t.Cleanup(func() { killPidFile(pidFile, syscall.SIGKILL) })
	uri := "bolt://127.0.0.1:" + privateNeo4jPort
	ctx := context.Background()
	store, err := graph.Open(ctx, graph.Config{URI: uri, Database: "neo4j", MaxPoolSize: 4, ConnectWait: 60 * time.Second,
		QueryTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(context.Background()) })
	if _, _, err := store.Migrate(ctx); err != nil { // the private database only, never the shared one
		t.Fatal(err)
	}
	tok, _, err := apitoken.NewStore(store, time.Now).Create(ctx, apitoken.NewToken{Owner: subject, Kind: "service", CreatedBy: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	events, ids := pipelineEvents(t, s, 30)
	events, ids = withRefusals(s, events, ids, 3)
	api := freePort(t)
	start(t, kc, []string{"HEADWATER_NEO4J_URI=" + uri, "HEADWATER_CONSUMER_BATCH_SIZE=8", "HEADWATER_CONSUMER_TX_MAX_EVENTS=8",
		"HEADWATER_NEO4J_CONNECT_WAIT=60s"}, "serve", "--http-addr="+api, "--http-metrics-addr="+freePort(t), "--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 90*time.Second)
	watch := watchReady("http://" + api + "/readyz")
	p := newProducer(func() string { return api }, tok)
	wait := sendAsync(t, p, events, ids, 2)
	waitAcked(t, p.led, len(events)/3)
	_, acked, _ := p.led.snapshot()
	waitSomeIn(t, store, acked, 1) // it is projecting
	killPidFile(pidFile, syscall.SIGKILL)
	waitReadyState(t, "http://"+api+"/readyz", "neo4j", true, 30*time.Second)
	time.Sleep(2 * time.Second)
	startPrivateNeo4j(t, repo, state)
	wait()
	assertExactlyOnce(t, store, kc, s, p.led, subject)
	watch.stop()
	if !watch.reported("neo4j") {
		t.Fatalf("readiness did not name neo4j while it was down: %s", watch)
	}
}

// waitSomeIn waits until at least min of the ids are Event nodes in store.
func waitSomeIn(t *testing.T, store *graph.Store, ids []string, min int) {
	t.Helper()
	deadline := time.Now().Add(faultTimeout)
	for time.Now().Before(deadline) {
		res, err := neo4j.ExecuteQuery(context.Background(), store.Driver,
			"MATCH (e:Event) WHERE e.key IN $keys RETURN count(e) AS n", map[string]any{"keys": eventKeys(ids)},
			neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database))
		if err == nil && int(res.Records[0].Values[0].(int64)) >= min {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("fewer than %d events projected within %s", min, faultTimeout)
}

// envOr is the environment variable's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
