package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// LineageQuery is the `lineage` operation of the client contract (shared API.md).
const LineageQuery = `query Lineage($start: NodeRef!, $direction: Direction!, $depth: Int!, $granularity: Granularity, $maxNodes: Int, $asOf: Time) {
  lineage(start: $start, direction: $direction, depth: $depth, granularity: $granularity, maxNodes: $maxNodes, asOf: $asOf) {
    truncated
    nodes { id }
    edges { from to }
  }
}`

// QueryConfig configures the query driver.
type QueryConfig struct {
	URL         string        `json:"url"` // http://127.0.0.1:8080/graphql
	Tokens      []string      `json:"-"`   // principals; "" sends no Authorization header
	Principals  int           `json:"principals"`
	Concurrency int           `json:"concurrency"`
	Rate        float64       `json:"rate"` // queries/s open-loop; 0 = closed loop at Concurrency
	Duration    time.Duration `json:"durationNs"`
	Mix         Mix           `json:"mix"`
	Seed        uint64        `json:"seed"`
	Timeout     time.Duration `json:"timeoutNs"`
	// RetryAfter makes a worker that was refused with a Retry-After wait that long (at most maxRetryAfterWait)
	// before its next query, as a well-behaved client does; off, it asks again at once.
	RetryAfter bool `json:"retryAfter,omitempty"`
}

// maxRetryAfterWait bounds how long a worker honours a Retry-After.
const maxRetryAfterWait = 5 * time.Second

// ErrDriverConfig reports an invalid driver configuration.
var ErrDriverConfig = errors.New("invalid driver config")

// Validate reports the first invalid setting.
func (c QueryConfig) Validate() error {
	switch {
	case c.URL == "":
		return fmt.Errorf("%w: url is required", ErrDriverConfig)
	case c.Concurrency < 1:
		return fmt.Errorf("%w: concurrency must be at least 1", ErrDriverConfig)
	case c.Duration <= 0:
		return fmt.Errorf("%w: duration must be positive", ErrDriverConfig)
	case c.Rate < 0:
		return fmt.Errorf("%w: rate must not be negative", ErrDriverConfig)
	}
	return c.Mix.Validate()
}

// QuerySample is one answered (or failed) query.
type QuerySample struct {
	Spec      Spec
	Latency   time.Duration
	Nodes     int
	Edges     int
	Truncated bool
	Err       string // "" when the answer had data and no errors; else the error code or transport error
	// RetryAfter is the refusal's Retry-After (0: none).
	RetryAfter time.Duration
}

// Doer sends an HTTP request (http.Client satisfies it).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

var _ Doer = (*http.Client)(nil)

// QueryDriver sends the mix and collects samples.
type QueryDriver struct {
	cfg    QueryConfig
	client Doer
	now    func() time.Time
	plan   *planner
	mu     sync.Mutex
}

// NewQueryDriver validates the config and prepares the planner over the given roots.
func NewQueryDriver(cfg QueryConfig, client Doer, hubs, other []Root, now func() time.Time) (*QueryDriver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(hubs)+len(other) == 0 {
		return nil, fmt.Errorf("%w: no roots to query", ErrDriverConfig)
	}
	if len(cfg.Tokens) == 0 {
		cfg.Tokens = []string{""}
	}
	cfg.Principals = len(cfg.Tokens)
	return &QueryDriver{cfg: cfg, client: client, now: now,
		plan: newPlanner(cfg.Mix, cfg.Seed, hubs, other, len(cfg.Tokens), now())}, nil
}

func (d *QueryDriver) nextSpec() Spec {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.plan.next()
}

// Run drives the load for the configured duration and returns the samples and the timeline.
func (d *QueryDriver) Run(ctx context.Context) ([]QuerySample, []Second) {
	start := d.now()
	tl := newTimeline(start)
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Duration)
	defer cancel()
	var (
		mu      sync.Mutex
		samples []QuerySample
		wg      sync.WaitGroup
	)
	record := func(s QuerySample) {
		tl.at(d.now(), func(sec *Second) {
			sec.Completed++
			if s.Err != "" {
				sec.Errors++
			}
		})
		mu.Lock()
		samples = append(samples, s)
		mu.Unlock()
	}
	ticks := d.schedule(ctx, start)
	for range d.cfg.Concurrency {
		wg.Go(func() {
			for intended := range ticks {
				s := d.one(ctx, d.nextSpec(), intended)
				record(s)
				if d.cfg.RetryAfter && s.RetryAfter > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(min(s.RetryAfter, maxRetryAfterWait)):
					}
				}
			}
		})
	}
	wg.Wait()
	return samples, tl.snapshot()
}

// schedule yields intended send times: open-loop at Rate, or "now" as fast as workers take them.
func (d *QueryDriver) schedule(ctx context.Context, start time.Time) <-chan time.Time {
	out := make(chan time.Time, max(1, d.cfg.Concurrency))
	go func() {
		defer close(out)
		for i := 0; ; i++ {
			at := d.now()
			if d.cfg.Rate > 0 {
				at = start.Add(time.Duration(float64(i) / d.cfg.Rate * float64(time.Second)))
				if wait := at.Sub(d.now()); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case out <- at:
			}
		}
	}()
	return out
}

func (d *QueryDriver) one(ctx context.Context, s Spec, intended time.Time) QuerySample {
	smp := QuerySample{Spec: s}
	body, err := json.Marshal(map[string]any{"query": LineageQuery, "operationName": "Lineage", "variables": variables(s, d.cfg.Mix.MaxNodes)})
	if err != nil {
		smp.Err = "encode"
		return smp
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, d.cfg.URL, bytes.NewReader(body))
	if err != nil {
		smp.Err = "request"
		return smp
	}
	req.Header.Set("Content-Type", "application/json")
	if tok := d.cfg.Tokens[s.Principal]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		smp.Latency, smp.Err = d.now().Sub(intended), "transport"
		return smp
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	smp.Latency = d.now().Sub(intended)
	if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs > 0 {
		smp.RetryAfter = time.Duration(secs) * time.Second
	}
	if err != nil {
		smp.Err = "read"
		return smp
	}
	parseAnswer(resp.StatusCode, b, &smp)
	return smp
}

func (d *QueryDriver) timeout() time.Duration {
	if d.cfg.Timeout > 0 {
		return d.cfg.Timeout
	}
	return 30 * time.Second
}

func variables(s Spec, maxNodes int) map[string]any {
	v := map[string]any{"start": map[string]any{"dataset": map[string]any{"namespace": s.Root.Namespace, "name": s.Root.Name}},
		"direction": s.Direction, "depth": s.Depth, "granularity": s.Granularity, "maxNodes": maxNodes}
	if s.AsOf != nil {
		v["asOf"] = s.AsOf.UTC().Format(time.RFC3339Nano)
	}
	return v
}

type gqlAnswer struct {
	Data *struct {
		Lineage *struct {
			Truncated bool              `json:"truncated"`
			Nodes     []json.RawMessage `json:"nodes"`
			Edges     []json.RawMessage `json:"edges"`
		} `json:"lineage"`
	} `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

func parseAnswer(status int, body []byte, s *QuerySample) {
	var a gqlAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		s.Err = fmt.Sprintf("http %d", status)
		return
	}
	if len(a.Errors) > 0 {
		s.Err = a.Errors[0].Extensions.Code
		if s.Err == "" {
			s.Err = "graphql"
		}
	}
	if a.Data == nil || a.Data.Lineage == nil {
		if s.Err == "" {
			s.Err = fmt.Sprintf("http %d", status)
		}
		return
	}
	s.Nodes, s.Edges, s.Truncated = len(a.Data.Lineage.Nodes), len(a.Data.Lineage.Edges), a.Data.Lineage.Truncated
}
