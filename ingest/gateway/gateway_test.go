package gateway_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/identcheck"
	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/producecheck"
	"github.com/headwater-data/headwater/internal/testenv"
)

type fixture struct {
	srv *httptest.Server
	kc  kafkaio.Config
}

func newFixture(t *testing.T, cfg gateway.Config) fixture {
	t.Helper()
	kc := testenv.KafkaConfig(t)
	prod, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prod.Close() })
	dec, err := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	norm, err := normalize.New(normalize.Config{DefaultEnv: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	g := gateway.New(cfg, kc, identcheck.New(dec, norm), prod, producecheck.New(nil, nil), gateway.NewMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler), time.Now)
	mux := http.NewServeMux()
	g.Register(mux)
	srv := httptest.NewServer(testPrincipal(mux))
	t.Cleanup(srv.Close)
	return fixture{srv: srv, kc: kc}
}

// testPrincipal stands in for the authn middleware: X-Test-Principal names the producer.
func testPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := authz.Principal{Subject: "producer-" + r.Header.Get("X-Test-Principal"), Kind: "producer"}
		next.ServeHTTP(w, r.WithContext(authz.WithPrincipal(r.Context(), p)))
	})
}

func defaults() gateway.Config {
	return gateway.Config{MaxBodyBytes: gateway.DefaultMaxBodyBytes, MaxBatchEvents: gateway.DefaultMaxBatchEvents,
		RatePerSecond: gateway.DefaultRatePerSecond, RateBurst: gateway.DefaultRateBurst, MaxInFlightBytes: gateway.DefaultMaxInFlightBytes}
}

func runEvent(runID, eventType string) string {
	return fmt.Sprintf(`{"eventType":%q,"eventTime":%q,"producer":"https://example.com/producer","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent","run":{"runId":%q},"job":{"namespace":"gw-test","name":"job.a"},"inputs":[{"namespace":"postgres://db:5432","name":"s.t"}],"outputs":[]}`,
		eventType, time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), runID)
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response is not JSON: %s", b)
	}
	return resp.StatusCode, resp.Header, m
}

func TestAcceptedEventIsDurableInKafkaWithMetadata(t *testing.T) {
	f := newFixture(t, defaults())
	runID := uuid.NewString()
	code, _, body := post(t, f.srv.URL+"/api/v1/lineage", runEvent(runID, "START"), map[string]string{"Idempotency-Key": "ev-123", "X-Test-Principal": "a"})
	if code != http.StatusAccepted || body["eventId"] != "ev-123" {
		t.Fatalf("got %d %v", code, body)
	}
	msgs := testenv.ReadTopic(t, f.kc, f.kc.EventsTopic, 1, 10*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("want exactly one message, got %d", len(msgs))
	}
	m := msgs[0]
	hdr := map[string]string{}
	for _, h := range m.Headers {
		hdr[string(h.Key)] = string(h.Value)
	}
	if hdr[kafkaio.HeaderEventID] != "ev-123" || hdr[kafkaio.HeaderPrincipal] != "producer-a" || hdr[kafkaio.HeaderReceivedAt] == "" {
		t.Fatalf("headers: %v", hdr)
	}
	if string(m.Key) != "run:gw-test/job.a" {
		t.Fatalf("key %q: want the OpenLineage transport's run:{job} key", m.Key)
	}
	if !strings.Contains(string(m.Value), runID) {
		t.Fatal("value is not the event as sent")
	}
}

func TestMalformedEventIs400NamingFieldAndRuleAndQuarantined(t *testing.T) {
	f := newFixture(t, defaults())
	bad := strings.Replace(runEvent(uuid.NewString(), "START"), `"runId":"`, `"runId":"not-a-uuid-`, 1)
	code, _, body := post(t, f.srv.URL+"/api/v1/lineage", bad, map[string]string{"X-Test-Principal": "b"})
	if code != http.StatusBadRequest {
		t.Fatalf("got %d %v", code, body)
	}
	e := body["error"].(map[string]any)
	if e["field"] != "run.runId" || e["rule"] == "" || !strings.Contains(fmt.Sprint(e["message"]), "runId") {
		t.Fatalf("error must name the field and rule: %v", e)
	}
	q := testenv.ReadTopic(t, f.kc, f.kc.QuarantineTopic, 1, 10*time.Second)
	var rec kafkaio.QuarantineRecord
	if err := json.Unmarshal(q[0].Value, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Field != "run.runId" || rec.Principal != "producer-b" || rec.Producer != "https://example.com/producer" ||
		rec.ReceivedAt.IsZero() || !bytes.Contains(rec.Payload, []byte("not-a-uuid")) || rec.EventID != body["eventId"] {
		t.Fatalf("quarantine record incomplete: %+v", rec)
	}
}

func TestBatchAnswersPerEventAndOneBadDoesNotSinkOthers(t *testing.T) {
	f := newFixture(t, defaults())
	good1, good2 := runEvent(uuid.NewString(), "START"), runEvent(uuid.NewString(), "COMPLETE")
	bad := strings.Replace(runEvent(uuid.NewString(), "START"), `"eventType":"START"`, `"eventType":"BEGIN"`, 1)
	code, _, body := post(t, f.srv.URL+"/api/v1/lineage/batch", "["+good1+","+bad+","+good2+"]", nil)
	if code != http.StatusOK || body["accepted"] != 2.0 || body["rejected"] != 1.0 {
		t.Fatalf("got %d %v", code, body)
	}
	res := body["results"].([]any)
	if res[1].(map[string]any)["status"] != "rejected" || res[1].(map[string]any)["error"].(map[string]any)["field"] != "eventType" {
		t.Fatalf("bad event's result: %v", res[1])
	}
	if got := testenv.ReadTopic(t, f.kc, f.kc.EventsTopic, 2, 10*time.Second); len(got) != 2 {
		t.Fatalf("want the 2 good events in the topic, got %d", len(got))
	}
	if got := testenv.ReadTopic(t, f.kc, f.kc.QuarantineTopic, 1, 10*time.Second); len(got) != 1 {
		t.Fatalf("want the bad event quarantined once, got %d", len(got))
	}
}

// A batch body that is not valid JSON (here a number with a leading zero inside an item, which the fast splitter
// would take) is refused whole, like one that is not an array (issue 13 item 16).
func TestBatchBodyThatIsNotValidJSONIsRefusedWhole(t *testing.T) {
	f := newFixture(t, defaults())
	good := runEvent(uuid.NewString(), "START")
	bad := strings.Replace(runEvent(uuid.NewString(), "START"), `{`, `{"x":01,`, 1)
	for _, b := range []string{"[" + good + "," + bad + "]", "[" + good + "] trailing", "{}", "[" + good + ","} {
		code, _, body := post(t, f.srv.URL+"/api/v1/lineage/batch", b, nil)
		if code != http.StatusBadRequest || body["status"] != "rejected" || body["results"] != nil {
			t.Fatalf("body %.40q: got %d %v", b, code, body)
		}
	}
}

func TestGzipBodyAccepted(t *testing.T) {
	f := newFixture(t, defaults())
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(runEvent(uuid.NewString(), "START")))
	_ = zw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/api/v1/lineage", &buf)
	req.Header.Set("Content-Encoding", "gzip")
	if code, _, body := do(t, req); code != http.StatusAccepted {
		t.Fatalf("gzip: %d %v", code, body)
	}
}

func TestOversizedBodyIs413AndQuarantinedByDigest(t *testing.T) {
	cfg := defaults()
	cfg.MaxBodyBytes = 4096
	f := newFixture(t, cfg)
	big := strings.Replace(runEvent(uuid.NewString(), "START"), `"name":"job.a"`, `"name":"`+strings.Repeat("x", 8000)+`"`, 1)
	code, _, body := post(t, f.srv.URL+"/api/v1/lineage", big, nil)
	if code != http.StatusRequestEntityTooLarge || body["error"].(map[string]any)["rule"] != "max-bytes" {
		t.Fatalf("got %d %v", code, body)
	}
	if got := testenv.ReadTopic(t, f.kc, f.kc.QuarantineTopic, 1, 10*time.Second); len(got) != 1 {
		t.Fatalf("oversized body not quarantined")
	}
}

func TestRunawayProducerGets429WithRetryAfterOthersStillServed(t *testing.T) {
	cfg := defaults()
	cfg.RatePerSecond, cfg.RateBurst = 1, 2
	f := newFixture(t, cfg)
	ev := runEvent(uuid.NewString(), "START")
	for range 2 {
		if code, _, b := post(t, f.srv.URL+"/api/v1/lineage", ev, map[string]string{"X-Test-Principal": "runaway"}); code != http.StatusAccepted {
			t.Fatalf("within burst: %d %v", code, b)
		}
	}
	code, hdr, _ := post(t, f.srv.URL+"/api/v1/lineage", ev, map[string]string{"X-Test-Principal": "runaway"})
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("want 429 with Retry-After, got %d %q", code, hdr.Get("Retry-After"))
	}
	if code, _, _ := post(t, f.srv.URL+"/api/v1/lineage", ev, map[string]string{"X-Test-Principal": "polite"}); code != http.StatusAccepted {
		t.Fatalf("another producer was starved: %d", code)
	}
}

func TestKafkaNotAcknowledgingIs503WithRetryAfter(t *testing.T) {
	kc := testenv.KafkaConfig(t)
	kc.EventsTopic = "t.missing." + testenv.Token(4) // auto-creation is off: the broker never acknowledges
	kc.ProduceTimeout = 3 * time.Second
	prod, err := kafkaio.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	dec, _ := decode.NewDecoder(olevent.DefaultLimits(), time.Now)
	g := gateway.New(defaults(), kc, dec, prod, producecheck.New(nil, nil),
		gateway.NewMetrics(prometheus.NewRegistry()), slog.New(slog.DiscardHandler), time.Now)
	mux := http.NewServeMux()
	g.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, hdr, body := post(t, srv.URL+"/api/v1/lineage", runEvent(uuid.NewString(), "START"), nil)
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("want 503 + Retry-After, got %d %v", code, body)
	}
}
