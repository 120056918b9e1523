package drive

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/sink"
)

// Sender is the sink the ingest driver sends through (sink.HTTP in the benchmark).
type Sender interface {
	Send(ctx context.Context, events []gen.Event) ([]sink.Result, error)
}

// Visibility answers which of the given eventIds are projected (their Event node exists).
type Visibility interface {
	Visible(ctx context.Context, ids []string) ([]string, error)
}

// LagReader reads the projector's consumer lag in messages.
type LagReader interface {
	Lag(ctx context.Context) (int64, error)
}

// IngestConfig configures the ingest driver.
type IngestConfig struct {
	Rate        float64       `json:"rate"`        // events/s open-loop; 0 = closed loop
	Concurrency int           `json:"concurrency"` // requests in flight
	Batch       int           `json:"batch"`       // events per request
	Duration    time.Duration `json:"durationNs"`  // sending time
	Drain       time.Duration `json:"drainNs"`     // how long to wait for projection after sending stops
	PollEvery   time.Duration `json:"pollEveryNs"` // visibility and lag sampling period
	PollBatch   int           `json:"pollBatch"`   // eventIds per visibility query
	// VisibleShare is the share of accepted events whose visibility is tracked (chosen by a hash of the eventId).
	// Polling every event's Event node costs the database under test thousands of index seeks a second, which the
	// projector then competes with; a sample keeps the measurement from loading what it measures. 0 means 1.
	VisibleShare float64 `json:"visibleShare"`
	// FinishRuns: after Duration, send the remaining events of the runs already started (no new runs), so a warm-up
	// run leaves no run without its terminal event behind (such runs pin their job's checkpoint for a day).
	FinishRuns bool `json:"finishRuns,omitempty"`
}

// share is the effective visibility sample share.
func (c IngestConfig) share() float64 {
	if c.VisibleShare <= 0 {
		return 1
	}
	return c.VisibleShare
}

// sampled reports whether an event's visibility is tracked: a fixed subset of event ids, the same on every run.
func (c IngestConfig) sampled(eventID string) bool {
	if c.share() >= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(eventID))
	return float64(h.Sum32()) < c.share()*(1<<32)
}

// Validate reports the first invalid setting.
func (c IngestConfig) Validate() error {
	switch {
	case c.Rate < 0:
		return fmt.Errorf("%w: rate must not be negative", ErrDriverConfig)
	case c.Concurrency < 1 || c.Batch < 1:
		return fmt.Errorf("%w: concurrency and batch must be at least 1", ErrDriverConfig)
	case c.Duration <= 0 || c.PollEvery <= 0 || c.PollBatch < 1:
		return fmt.Errorf("%w: duration, poll-every and poll-batch must be positive", ErrDriverConfig)
	case c.VisibleShare < 0 || c.VisibleShare > 1:
		return fmt.Errorf("%w: visible-share must be in [0,1], got %g", ErrDriverConfig, c.VisibleShare)
	}
	return nil
}

// IngestResult is the summary of an ingest run.
type IngestResult struct {
	Config          IngestConfig   `json:"config"`
	Mode            string         `json:"mode"` // open-loop or closed-loop
	Elapsed         time.Duration  `json:"elapsedNs"`
	Sent            int64          `json:"sent"`
	Accepted        int64          `json:"accepted"`
	Rejected        int64          `json:"rejected"`
	Throttled       int64          `json:"throttledAttempts"`
	TransportErrs   int64          `json:"transportErrors"`
	AcceptedPerSec  float64        `json:"acceptedPerSec"`
	Visible         int64          `json:"visible"`         // sampled events seen projected (IngestConfig.VisibleShare)
	NotVisible      int64          `json:"notVisible"`      // sampled events accepted but not projected by the end of the drain
	ProjectedPerSec float64        `json:"projectedPerSec"` // sampled visible events / share / elapsed
	SendLatency     Percentiles    `json:"sendLatency"`     // intended send until the gateway answered
	VisibleLatency  Percentiles    `json:"visibleLatency"`  // intended send until the Event node was seen
	RejectReasons   map[string]int `json:"rejectReasons"`
	MaxLag          int64          `json:"maxLag"` // -1 when not sampled
	Timeline        []Second       `json:"timeline"`
	Generated       gen.Stats      `json:"generated"`
	// Cost is what the run cost the system under test, from meter readings (IngestDriver.SetMeter).
	Cost *Cost `json:"cost,omitempty"`
}

// IngestDriver sends a stream and watches it become visible.
type IngestDriver struct {
	cfg   IngestConfig
	src   Source
	send  Sender
	vis   Visibility // nil: no visibility measurement
	lag   LagReader  // nil: no lag sampling
	now   func() time.Time
	meter Meter // nil: no cost reading

	mu       sync.Mutex
	pending  map[string]time.Time // eventId -> intended send time
	sendLat  []time.Duration
	visLat   []time.Duration
	reasons  map[string]int
	counters IngestResult
}

// NewIngestDriver validates the config. vis and lag may be nil.
func NewIngestDriver(cfg IngestConfig, stream *gen.Stream, send Sender, vis Visibility, lag LagReader, now func() time.Time) (*IngestDriver, error) {
	return NewIngestDriverFrom(cfg, StreamSource(stream), send, vis, lag, now)
}

// NewIngestDriverFrom is NewIngestDriver over any source (a pre-generated Corpus in the benchmark).
func NewIngestDriverFrom(cfg IngestConfig, src Source, send Sender, vis Visibility, lag LagReader, now func() time.Time) (*IngestDriver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &IngestDriver{cfg: cfg, src: src, send: send, vis: vis, lag: lag, now: now,
		pending: map[string]time.Time{}, reasons: map[string]int{}}, nil
}

// SetMeter makes the run read the system's cost (CPU by process, projector counters, transaction log) when it
// starts, when sending stops and when the drain ends; the result's Cost is computed from the readings.
func (d *IngestDriver) SetMeter(m Meter) { d.meter = m }

type job struct {
	events   []gen.Event
	intended time.Time
}

// Run sends for the configured duration, then drains visibility, and returns the summary.
func (d *IngestDriver) Run(ctx context.Context) (IngestResult, error) {
	first := d.read(ctx)
	start := d.now()
	tl := newTimeline(start)
	sendCtx, cancel := context.WithTimeout(ctx, d.cfg.Duration)
	defer cancel()
	jobs := d.schedule(sendCtx, ctx, start)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for range d.cfg.Concurrency {
		wg.Go(func() {
			for j := range jobs {
				if err := d.deliver(ctx, j, tl); err != nil {
					errOnce.Do(func() { firstErr = err })
				}
			}
		})
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() { defer close(polled); d.poll(pollCtx, tl) }()
	wg.Wait()
	sentAt := d.now()
	sent := d.read(ctx)
	d.drain(ctx, tl)
	stopPoll()
	<-polled
	last := d.read(ctx)
	res := d.result(start, sentAt, tl)
	if d.meter != nil {
		c := costOf(first, sent, last, res.Timeline, sentAt.Sub(start))
		res.Cost = &c
	}
	return res, firstErr
}

// read takes a meter reading (nil without a meter; a failed reading is logged and left out).
func (d *IngestDriver) read(ctx context.Context) *Reading {
	if d.meter == nil {
		return nil
	}
	r, err := d.meter.Read(ctx)
	if err != nil {
		slog.Warn("meter reading failed", "err", err)
		return nil
	}
	return &r
}

// schedule generates events in one goroutine (the stream is sequential) and hands out requests until sendCtx
// ends; with FinishRuns it then sends the events of the runs already started (ctx bounds that phase).
func (d *IngestDriver) schedule(sendCtx, ctx context.Context, start time.Time) <-chan job {
	out := make(chan job, d.cfg.Concurrency)
	go func() {
		defer close(out)
		i := 0
		// send schedules request i at the rate, filled from next; false when the phase is over (its context
		// ended, or next ran dry).
		send := func(ctx context.Context, next func() (gen.Event, bool)) bool {
			at := d.now()
			if d.cfg.Rate > 0 {
				at = start.Add(time.Duration(float64(i*d.cfg.Batch) / d.cfg.Rate * float64(time.Second)))
				if wait := at.Sub(d.now()); wait > 0 {
					select {
					case <-ctx.Done():
						return false
					case <-time.After(wait):
					}
				}
			}
			i++
			evs := make([]gen.Event, 0, d.cfg.Batch)
			for len(evs) < d.cfg.Batch {
				ev, ok := next()
				if !ok {
					break
				}
				evs = append(evs, ev)
			}
			if len(evs) == 0 {
				return false
			}
			select {
			case <-ctx.Done():
				return false
			case out <- job{events: evs, intended: at}:
			}
			return len(evs) == d.cfg.Batch
		}
		for send(sendCtx, d.src.Next) {
		}
		if d.cfg.FinishRuns && ctx.Err() == nil {
			for send(ctx, d.src.NextPending) {
			}
		}
	}()
	return out
}

func (d *IngestDriver) deliver(ctx context.Context, j job, tl *timeline) error {
	res, err := d.send.Send(ctx, j.events)
	done := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counters.Sent += int64(len(j.events))
	if err != nil {
		d.counters.TransportErrs += int64(len(j.events))
		tl.at(done, func(s *Second) { s.Sent += len(j.events); s.Rejected += len(j.events) })
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		return err
	}
	d.sendLat = append(d.sendLat, done.Sub(j.intended))
	acc := 0
	for _, r := range res {
		d.counters.Throttled += int64(r.Throttled)
		if r.Err != nil {
			d.counters.Rejected++
			d.reasons[reason(r)]++
			continue
		}
		acc++
		d.counters.Accepted++
		if _, seen := d.pending[r.EventID]; r.EventID != "" && !seen && d.cfg.sampled(r.EventID) {
			d.pending[r.EventID] = j.intended
		}
	}
	tl.at(done, func(s *Second) { s.Sent += len(j.events); s.Accepted += acc; s.Rejected += len(j.events) - acc })
	return nil
}

func reason(r sink.Result) string {
	switch {
	case errors.Is(r.Err, sink.ErrThrottled):
		return "throttled"
	case r.Status != 0 && r.Reason != "":
		return fmt.Sprintf("http %d: %s", r.Status, r.Reason)
	case r.Status != 0:
		return fmt.Sprintf("http %d", r.Status)
	}
	return "rejected"
}
