package gateway_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/testenv"
)

// Two uploads of unknown length (chunked, so each reserves the body limit) fill the in-flight byte budget while
// their bodies trickle in; a third request is shed at once with 503, Retry-After and rule overloaded, counted in
// headwater_gateway_shed_total, without reading its body. Once the two finish (202), there is room again.
func TestInFlightBytesOverBudgetShedWith503AndRetryAfter(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	prod, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	cfg := defaults()
	cfg.MaxBodyBytes = 64 << 10
	cfg.MaxInFlightBytes = 2 * cfg.MaxBodyBytes
	reg := prometheus.NewRegistry()
	g := gateway.New(cfg, kc, dec, prod, producecheck.New(nil, nil), gateway.NewMetrics(reg), slog.New(slog.DiscardHandler), time.Now)
	mux := http.NewServeMux()
	g.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	type answer struct {
		code int
		err  error
	}
	var writers []*io.PipeWriter
	answers := make(chan answer, 2)
	for range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/lineage", pr)
		req.ContentLength = -1
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			resp.Body.Close()
			answers <- answer{code: resp.StatusCode}
		}()
		_, _ = pw.Write([]byte(`{"eventType":`)) // the body has begun: the handler holds its reservation
	}
	defer func() { // a failing test must not leave srv.Close waiting on the open uploads
		for _, pw := range writers {
			_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(gaugeOf(t, reg)) < float64(cfg.MaxInFlightBytes) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	code, hdr, body := post(t, srv.URL+"/api/v1/lineage", runEvent(uuid.NewString(), "START"), nil)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" || body["rule"] != "overloaded" {
		t.Fatalf("over the in-flight budget: want 503 with Retry-After 1 and rule overloaded, got %d %q %v", code, hdr.Get("Retry-After"), body)
	}
	// A shed request whose body is still arriving is answered at once too, on a connection that then closes
	// (net/http would otherwise read the rest of the unread body before sending the 503).
	pr, pw := io.Pipe() // never written: only the body's first bytes arrive, until the body gives up after 10 s
	giveUp := time.AfterFunc(10*time.Second, func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/lineage", io.MultiReader(strings.NewReader(`{"eventType":`), pr))
	req.ContentLength = 4096
	resp, err := http.DefaultClient.Do(req)
	if !giveUp.Stop() {
		t.Fatalf("a shed request with its body still arriving was answered only when its body ended: %v", err)
	}
	_ = pw.Close()
	if err != nil {
		t.Fatalf("a shed request with its body still arriving: %v", err)
	} else {
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
			t.Fatalf("a shed request with its body still arriving: %d, connection closes %v", resp.StatusCode, resp.Close)
		}
	}
	if n := counterOf(t, reg, "headwater_gateway_shed_total"); n != 2 {
		t.Fatalf("headwater_gateway_shed_total = %v, want 2", n)
	}
	for _, pw := range writers[:2] {
		rest := strings.TrimPrefix(runEvent(uuid.NewString(), "START"), `{"eventType":`)
		_, _ = pw.Write([]byte(rest))
		_ = pw.Close()
	}
	for range 2 {
		if a := <-answers; a.err != nil || a.code != http.StatusAccepted {
			t.Fatalf("the uploads in flight: %d %v", a.code, a.err)
		}
	}
	if code, _, body := post(t, srv.URL+"/api/v1/lineage", runEvent(uuid.NewString(), "START"), nil); code != http.StatusAccepted {
		t.Fatalf("after the uploads finished there is room again: %d %v", code, body)
	}
	if v := testutil.ToFloat64(gaugeOf(t, reg)); v != 0 {
		t.Fatalf("headwater_gateway_in_flight_bytes = %v after every request ended", v)
	}
}

func gaugeOf(t *testing.T, reg *prometheus.Registry) prometheus.Collector {
	t.Helper()
	return gathered{reg: reg, name: "headwater_gateway_in_flight_bytes"}
}

func counterOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return testutil.ToFloat64(gathered{reg: reg, name: name})
}

// gathered is one metric of a registry as a collector, for testutil.ToFloat64.
type gathered struct {
	reg  *prometheus.Registry
	name string
}

func (g gathered) Describe(chan<- *prometheus.Desc) {}

func (g gathered) Collect(ch chan<- prometheus.Metric) {
	mfs, _ := g.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != g.name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), prometheus.UntypedValue, v)
		}
	}
}
