package drive

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/sink"
)

func TestSummarisePercentiles(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := Summarise(d)
	if p.Count != 100 || p.P50 != 50 || p.P95 != 95 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 {
		t.Fatalf("got %+v", p)
	}
	if Summarise(nil).Count != 0 {
		t.Fatal("empty sample")
	}
}

func TestParseCacheCounters(t *testing.T) {
	text := `# HELP headwater_cache_hits_total hits
headwater_cache_hits_total{cache="result"} 30
headwater_cache_hits_total{cache="neighbors",scope="a b"} 10
headwater_cache_requests_total{cache="result"} 50
headwater_cache_requests_total{cache="neighbors"} 50
other_total 5`
	c := parseCacheCounters([]byte(text))
	if !c.OK || c.Hits != 40 || c.Requests != 100 {
		t.Fatalf("got %+v", c)
	}
	r := HitRatio(CacheCounters{Hits: 0, Requests: 0, OK: true}, c)
	if r == nil || *r != 0.4 {
		t.Fatalf("ratio %v", r)
	}
	if HitRatio(CacheCounters{}, c) != nil {
		t.Fatal("ratio without a first scrape must be unknown")
	}
}

// fakeGraphQL answers lineage with depth*10 nodes (hub roots: truncated) and errors for one root.
func fakeGraphQL(t *testing.T, tokens *sync.Map) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.Contains(req.Query, "lineage(") {
			t.Errorf("bad request: %v", err)
		}
		tokens.Store(r.Header.Get("Authorization"), true)
		name := req.Variables["start"].(map[string]any)["dataset"].(map[string]any)["name"].(string)
		if name == "broken" {
			_, _ = io.WriteString(w, `{"data":null,"errors":[{"message":"x","extensions":{"code":"NOT_FOUND"}}]}`)
			return
		}
		depth := int(req.Variables["depth"].(float64))
		nodes := make([]string, depth*10)
		for i := range nodes {
			nodes[i] = fmt.Sprintf(`{"id":"n%d"}`, i)
		}
		_, _ = fmt.Fprintf(w, `{"data":{"lineage":{"truncated":%t,"nodes":[%s],"edges":[]}}}`,
			strings.HasPrefix(name, "hub"), strings.Join(nodes, ","))
	}))
}

func TestQueryDriverMeasuresTheMix(t *testing.T) {
	var tokens sync.Map
	srv := fakeGraphQL(t, &tokens)
	defer srv.Close()
	mix := DefaultMix()
	mix.HubShare = 0.3
	cfg := QueryConfig{URL: srv.URL, Tokens: []string{"", "alice"}, Concurrency: 4, Duration: 400 * time.Millisecond, Mix: mix, Seed: 1}
	hubs := []Root{{Namespace: "ns", Name: "hub1", Hub: true}}
	other := []Root{{Namespace: "ns", Name: "leaf1"}, {Namespace: "ns", Name: "broken"}}
	d, err := NewQueryDriver(cfg, srv.Client(), hubs, other, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	samples, tl := d.Run(context.Background())
	res := SummariseQueries(cfg, samples, tl, 400*time.Millisecond)
	if res.Overall.Count < 20 || res.Hub.Count == 0 || res.Ordinary.Count == 0 {
		t.Fatalf("too few samples: %+v", res.Overall)
	}
	if res.Errors["NOT_FOUND"] == 0 || res.ErrorRate <= 0 {
		t.Errorf("errors not counted: %v", res.Errors)
	}
	if res.TruncationRate <= 0 || res.TruncationRate >= 1 {
		t.Errorf("truncation rate %v: only hub answers are truncated", res.TruncationRate)
	}
	for _, row := range res.ByFanout {
		if row.Lo == 51 && row.P.Count != 0 {
			t.Errorf("no answer has 51-200 nodes, bucket has %d", row.P.Count)
		}
	}
	if _, ok := tokens.Load("Bearer alice"); !ok {
		t.Error("second principal never used")
	}
	if _, ok := tokens.Load(""); !ok {
		t.Error("empty token must send no Authorization header")
	}
	if len(tl) == 0 || tl[0].Completed == 0 {
		t.Error("empty timeline")
	}
}

type fakeSender struct {
	mu   sync.Mutex
	sent []time.Time
	n    int
}

func (f *fakeSender) Send(_ context.Context, evs []gen.Event) ([]sink.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]sink.Result, len(evs))
	for i := range evs {
		f.n++
		out[i] = sink.Result{EventID: fmt.Sprintf("e%d", f.n), Status: 202, Attempts: 1}
		if f.n%10 == 0 {
			out[i] = sink.Result{Status: 400, Attempts: 1, Err: sink.ErrRejected}
		}
	}
	f.sent = append(f.sent, time.Now())
	return out, nil
}

// fakeVisibility makes every id visible 30 ms after it was first asked about.
type fakeVisibility struct {
	mu    sync.Mutex
	first map[string]time.Time
}

func (f *fakeVisibility) Visible(_ context.Context, ids []string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range ids {
		at, ok := f.first[id]
		if !ok {
			f.first[id] = time.Now()
			continue
		}
		if time.Since(at) > 30*time.Millisecond {
			out = append(out, id)
		}
	}
	return out, nil
}

func TestIngestDriverOpenLoop(t *testing.T) {
	c := gen.DefaultConfig(1, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.Datasets, c.HubConsumers = 200, 10
	w, err := gen.NewWorld(c)
	if err != nil {
		t.Fatal(err)
	}
	send := &fakeSender{}
	vis := &fakeVisibility{first: map[string]time.Time{}}
	cfg := IngestConfig{Rate: 200, Concurrency: 4, Batch: 2, Duration: 500 * time.Millisecond, Drain: 2 * time.Second,
		PollEvery: 10 * time.Millisecond, PollBatch: 1000}
	d, err := NewIngestDriver(cfg, w.NewStream(), send, vis, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent < 60 || res.Sent > 120 {
		t.Errorf("open loop at 200/s for 0.5 s sent %d", res.Sent)
	}
	if res.Rejected != res.Sent/10 || res.Accepted != res.Sent-res.Rejected {
		t.Errorf("accepted %d rejected %d of %d", res.Accepted, res.Rejected, res.Sent)
	}
	if res.Visible != res.Accepted || res.NotVisible != 0 {
		t.Errorf("visible %d not visible %d, accepted %d", res.Visible, res.NotVisible, res.Accepted)
	}
	if res.VisibleLatency.P50 < 30 {
		t.Errorf("visible p50 %.1f ms, want >= 30", res.VisibleLatency.P50)
	}
	if res.Mode != "open-loop" || res.Generated.Events < int(res.Sent) {
		t.Errorf("mode %s generated %d", res.Mode, res.Generated.Events)
	}
}

func TestVisibleShareSamplesAFixedSubset(t *testing.T) {
	cfg := IngestConfig{VisibleShare: 0.1}
	n := 0
	for i := range 20000 {
		id := fmt.Sprintf("0190a3c4-%04x-7000-8000-%012x", i%65536, i*7919)
		if cfg.sampled(id) {
			n++
		}
		if first, again := cfg.sampled(id), cfg.sampled(id); first != again {
			t.Fatal("sampling is not deterministic")
		}
	}
	if n < 1700 || n > 2300 {
		t.Errorf("share 0.1 sampled %d of 20000", n)
	}
	if !(IngestConfig{}).sampled("x") || !(IngestConfig{VisibleShare: 1}).sampled("x") {
		t.Error("share 0 or 1 must track every event")
	}
	if err := (IngestConfig{Concurrency: 1, Batch: 1, Duration: 1, PollEvery: 1, PollBatch: 1, VisibleShare: 1.5}).Validate(); err == nil {
		t.Error("visible-share 1.5 accepted")
	}
}

// With FinishRuns the driver sends, after Duration, the rest of the runs it started: every run it planned is done.
func TestIngestDriverFinishRuns(t *testing.T) {
	c := gen.DefaultConfig(1, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c.Datasets, c.HubConsumers = 200, 10
	for _, finish := range []bool{false, true} {
		w, err := gen.NewWorld(c)
		if err != nil {
			t.Fatal(err)
		}
		cfg := IngestConfig{Concurrency: 2, Batch: 5, Duration: 200 * time.Millisecond, Drain: time.Millisecond,
			PollEvery: 10 * time.Millisecond, PollBatch: 100, FinishRuns: finish}
		d, err := NewIngestDriver(cfg, w.NewStream(), &fakeSender{}, nil, nil, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		g := res.Generated
		if done := g.RunsDone == g.Runs; done != finish {
			t.Errorf("finish-runs %v: %d of %d runs done after %d events", finish, g.RunsDone, g.Runs, g.Events)
		}
	}
}
