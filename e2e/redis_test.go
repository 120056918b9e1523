package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Redis is stopped in the middle: answers stay correct (a new edge written while Redis is down appears on the
// next query), the cache error metric says Redis is missing, and after Redis is back answers are still right.
func TestRedisStoppedMidTestAnswersStayCorrect(t *testing.T) {
	store := testenv.Store(t)
	kc := testenv.KafkaConfig(t)
	s := newScope(t)
	redisAddr := freePort(t)
	redis := startRedis(t, redisAddr)
	api, metrics := freePort(t), freePort(t)
	start(t, kc, []string{"HEADWATER_REDIS_ADDR=" + redisAddr}, "serve", "--http-addr="+api, "--http-metrics-addr="+metrics,
		"--archive-dir="+t.TempDir())
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)

	events, ids := pipelineEvents(t, s, 1)
	postBatch(t, api, events)
	waitEvents(t, store, ids, projectTimeout)
	first := downstream(t, api, s)
	if again := downstream(t, api, s); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("cached answer differs: %v vs %v", again, first)
	}
	if hits := metric(t, metrics, "headwater_cache_hits_total"); hits == 0 {
		t.Fatal("the repeated query was not served from the cache")
	}

	_ = redis.Process.Kill()
	_ = redis.Wait()
	extra, extraIDs := extraEdge(t, s)
	postBatch(t, api, extra)
	waitEvents(t, store, extraIDs, projectTimeout)
	down := downstream(t, api, s)
	if !contains(down, "mart/extra") || len(down) != len(first)+1 {
		t.Fatalf("with Redis down the new edge must appear: before %v, now %v", first, down)
	}
	if errs := metric(t, metrics, "headwater_cache_errors_total"); errs == 0 {
		t.Fatal("no cache error counted while Redis was down")
	}

	startRedis(t, redisAddr)
	time.Sleep(2 * time.Second)
	if back := downstream(t, api, s); fmt.Sprint(back) != fmt.Sprint(down) {
		t.Fatalf("after Redis came back: %v, want %v", back, down)
	}
}

func startRedis(t *testing.T, addr string) *exec.Cmd {
	t.Helper()
	port := addr[strings.LastIndex(addr, ":")+1:]
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v (installed by scripts/stack/stack.sh)", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for range 50 {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("private redis did not start")
	return nil
}

func postBatch(t *testing.T, api string, events [][]byte) {
	t.Helper()
	raw := make([]json.RawMessage, len(events))
	for i, e := range events {
		raw[i] = e
	}
	body, _ := json.Marshal(raw)
	req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage/batch", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(authed(req))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("batch: %v %v", err, resp)
	}
	resp.Body.Close()
}

// downstream returns the sorted dataset names downstream of src/orders (depth 5); an error fails the test.
func downstream(t *testing.T, api string, s scope) []string {
	t.Helper()
	names, err := queryDownstream(api, s)
	if err != nil {
		t.Fatalf("lineage: %v", err)
	}
	return names
}

// extraEdge is one more COMPLETE run: mart/revenue -> mart/extra.
func extraEdge(t *testing.T, s scope) ([][]byte, []string) {
	t.Helper()
	ev := fmt.Sprintf(`{"eventType":"COMPLETE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":"%s"},"job":{"namespace":%q,"name":"extra"},"inputs":[{"namespace":%q,"name":"mart/revenue"}],"outputs":[{"namespace":%q,"name":"mart/extra"}]}`,
		time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), newUUID(), s.jobNS, s.dsNS, s.dsNS)
	return [][]byte{[]byte(ev)}, []string{resolveID(t, []byte(ev))}
}

var metricLine = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? ([0-9.e+]+)$`)

// metric sums a counter over its labels from the metrics listener.
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range metricLine.FindAllStringSubmatch(get(t, "http://"+addr+"/metrics"), -1) {
		if m[1] == name {
			v, _ := strconv.ParseFloat(m[3], 64)
			sum += v
		}
	}
	return sum
}

func contains(xs []string, x string) bool {
	return slices.Contains(xs, x)
}
