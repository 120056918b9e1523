package resolvers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/lineage"
)

// BenchmarkHostilePayloads sends each hostile payload of issue 13 items 3 and 4 through the real GraphQL handler
// (NewHandler, in process: the time of ServeHTTP is the server's time on the request, network excluded) and
// reports per-request latency percentiles and the process CPU per request. Target: p99 under 10 ms each.
//
//	go test -run '^$' -bench HostilePayloads -benchtime 200x ./resolvers/
func BenchmarkHostilePayloads(b *testing.B) {
	h, err := NewHandler(Deps{Store: testenv.Store(b), Lineage: lineage.Config{CursorKey: testCursorKey}})
	if err != nil {
		b.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), authz.Principal{Subject: "bench", Kind: "user"})))
	})
	introspection, err := os.ReadFile("testdata/introspection.graphql")
	if err != nil {
		b.Fatal(err)
	}
	ok := queryBody(string(introspection))
	cases := append(hostilePayloads(), hostile{"accepted: introspection query (reference)",
		func() io.Reader { return bytes.NewReader(ok) }, int64(len(ok)), http.StatusOK})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchPayload(b, handler, c) })
	}
}

func benchPayload(b *testing.B, h http.Handler, c hostile) {
	lat := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		req := httptest.NewRequest(http.MethodPost, "/graphql", c.body())
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = c.length
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		lat = append(lat, time.Since(t0))
		if rec.Code != c.status {
			b.Fatalf("status %d, want %d: %.200s", rec.Code, c.status, rec.Body.String())
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
