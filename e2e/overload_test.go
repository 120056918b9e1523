package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/internal/testenv"
)

// overloadUploads concurrent producers each upload a ~4 MiB batch slowly (chunked, over ~2 s): 192 MiB of bodies
// at once, three times the default in-flight budget.
const overloadUploads = 48

// The gateway under more concurrent uploads than its in-flight byte budget (gateway.max-in-flight-bytes, default
// 64 MiB) sheds the excess with 503 and Retry-After and keeps its resident memory bounded; the same load with the
// budget lifted (1 GiB) takes every body into memory. Both peaks (VmHWM) are logged for docs/operations.md.
func TestOverloadGatewayShedsInsteadOfGrowingMemory(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	batch := overloadBatch(t, newScope(t))
	bounded := overloadRun(t, kc, batch, gateway.DefaultMaxInFlightBytes)
	unbounded := overloadRun(t, kc, batch, 1<<30)
	t.Logf("peak RSS growth: %d MiB with the %d MiB budget (%d shed), %d MiB with 1 GiB (%d shed)",
		bounded.growth>>20, gateway.DefaultMaxInFlightBytes>>20, bounded.shed, unbounded.growth>>20, unbounded.shed)
	if bounded.shed == 0 || bounded.retryAfter == 0 {
		t.Fatalf("over its budget the gateway must shed with 503 and Retry-After: %+v", bounded)
	}
	// The heap holds each body about four times while decoded and produced, and the collector (GOGC 400, ADR 0038)
	// lets garbage grow before it runs: 219-265 MiB measured for the 64 MiB budget; 6x is the bound.
	if 2*bounded.growth >= unbounded.growth || bounded.growth > 6*gateway.DefaultMaxInFlightBytes {
		t.Fatalf("memory grew with the load: %d MiB bounded, %d MiB unbounded", bounded.growth>>20, unbounded.growth>>20)
	}
}

type overloadResult struct {
	growth           int64 // VmHWM at the end minus VmRSS before the load, bytes
	shed, retryAfter int
	accepted, other  int
}

func overloadRun(t *testing.T, kc kafkaio.Config, batch []byte, budget int64) overloadResult {
	t.Helper()
	api := freePort(t)
	srv := start(t, kc, []string{"HEADWATER_GATEWAY_MAX_IN_FLIGHT_BYTES=" + strconv.FormatInt(budget, 10)},
		"serve", "--no-consumer", "--http-addr="+api, "--http-metrics-addr="+freePort(t))
	waitHTTP(t, "http://"+api+"/readyz", 60*time.Second)
	pid := srv.cmd.Process.Pid
	before := procStatus(t, pid, "VmRSS")
	var mu sync.Mutex
	var res overloadResult
	var wg sync.WaitGroup
	for range overloadUploads {
		wg.Go(func() {
			pr, pw := io.Pipe()
			go func() { // ~2 s per upload, so they overlap
				for off := 0; off < len(batch); off += len(batch) / 20 {
					_, _ = pw.Write(batch[off:min(off+len(batch)/20, len(batch))])
					time.Sleep(100 * time.Millisecond)
				}
				_ = pw.Close()
			}()
			req, _ := http.NewRequest(http.MethodPost, "http://"+api+"/api/v1/lineage/batch", pr)
			req.ContentLength = -1
			resp, err := http.DefaultClient.Do(authed(req))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.other++
			case resp.StatusCode == http.StatusServiceUnavailable:
				res.shed++
				if resp.Header.Get("Retry-After") != "" {
					res.retryAfter++
				}
			case resp.StatusCode == http.StatusOK:
				res.accepted++
			default:
				res.other++
			}
			if resp != nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_ = pr.CloseWithError(io.ErrClosedPipe)
		})
	}
	wg.Wait()
	res.growth = procStatus(t, pid, "VmHWM") - before
	srv.signal(syscall.SIGKILL)
	_ = srv.wait(t, 10*time.Second)
	return res
}

// overloadBatch is a batch body of ~4 MiB: 900 events of ~4.5 KB (a 4 KB description each).
func overloadBatch(t *testing.T, s scope) []byte {
	t.Helper()
	pad := strings.Repeat("x", 4000)
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range 900 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"eventType":"COMPLETE","eventTime":%q,"producer":"https://example.com/e2e","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":%q,"name":"load","facets":{"documentation":{"_producer":"https://example.com/e2e","_schemaURL":"https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json#/$defs/DocumentationJobFacet","description":%q}}},"inputs":[],"outputs":[{"namespace":%q,"name":"overload/%d"}]}`,
			time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), newUUID(), s.jobNS, pad, s.dsNS, i)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// procStatus reads a kB field of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
