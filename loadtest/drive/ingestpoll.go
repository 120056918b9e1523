package drive

import (
	"context"
	"log/slog"
	"sort"
	"time"
)

// poll checks visibility of pending events and samples the consumer lag until ctx ends.
func (d *IngestDriver) poll(ctx context.Context, tl *timeline) {
	t := time.NewTicker(d.cfg.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.pollOnce(ctx, tl)
		}
	}
}

func (d *IngestDriver) pollOnce(ctx context.Context, tl *timeline) {
	if d.lag != nil {
		if lag, err := d.lag.Lag(ctx); err == nil {
			tl.at(d.now(), func(s *Second) { s.Lag = max(s.Lag, lag) })
		} else if ctx.Err() == nil {
			slog.Warn("lag sample failed", "err", err)
		}
	}
	if d.vis == nil {
		return
	}
	ids := d.oldestPending(d.cfg.PollBatch)
	if len(ids) == 0 {
		return
	}
	seen, err := d.vis.Visible(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("visibility poll failed", "err", err)
		}
		return
	}
	now := d.now()
	d.mu.Lock()
	for _, id := range seen {
		if at, ok := d.pending[id]; ok {
			d.visLat = append(d.visLat, now.Sub(at))
			delete(d.pending, id)
			d.counters.Visible++
		}
	}
	d.mu.Unlock()
	// The timeline's projected count is scaled up from the sample.
	tl.at(now, func(s *Second) { s.Projected += int(float64(len(seen))/d.cfg.share() + 0.5) })
}

// oldestPending returns up to n pending eventIds, oldest intended send first.
func (d *IngestDriver) oldestPending(n int) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	type p struct {
		id string
		at time.Time
	}
	all := make([]p, 0, len(d.pending))
	for id, at := range d.pending {
		all = append(all, p{id, at})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	out := make([]string, 0, min(n, len(all)))
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, all[i].id)
	}
	return out
}

// drain keeps polling after sending stops until everything is visible or Drain elapses. With a meter, the drain
// also waits for the consumer lag to reach zero: the sample can be visible before the rest of the events are, and
// the cost window must hold the projection of every event it sent.
func (d *IngestDriver) drain(ctx context.Context, tl *timeline) {
	if d.vis == nil {
		return
	}
	deadline := d.now().Add(d.cfg.Drain)
	for d.now().Before(deadline) && ctx.Err() == nil {
		d.mu.Lock()
		left := len(d.pending)
		d.mu.Unlock()
		if left == 0 && (d.meter == nil || d.lag == nil || d.lagZero(ctx)) {
			return
		}
		d.pollOnce(ctx, tl)
		time.Sleep(d.cfg.PollEvery)
	}
}

// lagZero reports whether the consumer lag reads zero now.
func (d *IngestDriver) lagZero(ctx context.Context) bool {
	lag, err := d.lag.Lag(ctx)
	return err == nil && lag == 0
}

func (d *IngestDriver) result(start, sentAt time.Time, tl *timeline) IngestResult {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.counters
	r.Config, r.Mode = d.cfg, "closed-loop"
	if d.cfg.Rate > 0 {
		r.Mode = "open-loop"
	}
	r.Elapsed = sentAt.Sub(start)
	if s := r.Elapsed.Seconds(); s > 0 {
		r.AcceptedPerSec = float64(r.Accepted) / s
	}
	if s := d.now().Sub(start).Seconds(); s > 0 {
		r.ProjectedPerSec = float64(r.Visible) / d.cfg.share() / s
	}
	r.NotVisible = int64(len(d.pending))
	r.SendLatency, r.VisibleLatency = Summarise(d.sendLat), Summarise(d.visLat)
	r.RejectReasons = d.reasons
	r.Timeline = tl.snapshot()
	r.MaxLag = -1
	for _, s := range r.Timeline {
		r.MaxLag = max(r.MaxLag, s.Lag)
	}
	r.Generated = d.src.Stats()
	return r
}
