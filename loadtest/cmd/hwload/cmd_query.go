package main

import (
	"net/http"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/report"
)

// QueryCmd drives lineage queries against roots of the world (use the same world flags as the load).
type QueryCmd struct {
	World       WorldFlags    `embed:""`
	Neo4j       Neo4jFlags    `embed:""`
	Output      OutputFlags   `embed:""`
	URL         string        `help:"GraphQL endpoint." default:"http://127.0.0.1:8080/graphql"`
	MetricsURL  string        `help:"Prometheus endpoint for headwater_cache_* counters (empty: skip)." default:"http://127.0.0.1:9090/metrics"`
	Token       []string      `help:"Bearer token of a principal; repeat for several principals (empty value: no header)." default:""`
	Concurrency int           `help:"Queries in flight." default:"8"`
	Rate        float64       `help:"Queries/s open loop; 0 runs closed loop at --concurrency." default:"0"`
	Duration    time.Duration `help:"How long to send (5m+ for the real benchmark)." default:"30s"`
	Timeout     time.Duration `help:"Per-query timeout." default:"30s"`
	RetryAfter  bool          `help:"A worker refused with Retry-After waits that long (at most 5 s) before its next query."`
	Depth       []float64     `help:"Weights of depths 1..5." default:"0.25,0.30,0.25,0.12,0.08"`
	FieldShare  float64       `help:"Share of FIELD granularity." default:"0.2"`
	Upstream    float64       `help:"Share of UPSTREAM (else DOWNSTREAM)." default:"0.5"`
	AsOfShare   float64       `help:"Share with an explicit asOf in the last --as-of-window." default:"0.15"`
	AsOfWindow  time.Duration `help:"How far back asOf goes." default:"7200h"`
	HubShare    float64       `help:"Share of hub roots (else leaf roots)." default:"0.1"`
	CachedShare float64       `help:"Share drawn from a 64-query hot set (cacheable)." default:"0.5"`
	MaxNodes    int           `help:"maxNodes argument." default:"500"`
}

func (c *QueryCmd) mix() drive.Mix {
	m := drive.Mix{FieldShare: c.FieldShare, UpstreamShare: c.Upstream, AsOfShare: c.AsOfShare, HubShare: c.HubShare,
		CachedShare: c.CachedShare, AsOfWindow: c.AsOfWindow, MaxNodes: c.MaxNodes}
	copy(m.DepthWeights[:], c.Depth)
	return m
}

// Run queries and writes the result.
func (c *QueryCmd) Run(e *env) error {
	w, err := c.World.world(e.now())
	if err != nil {
		return err
	}
	hubs, other := drive.RootsFromWorld(w)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	qcfg := drive.QueryConfig{URL: c.URL, Tokens: c.Token, Concurrency: c.Concurrency, Rate: c.Rate,
		Duration: c.Duration, Mix: c.mix(), Seed: c.World.Seed, Timeout: c.Timeout,
		RetryAfter: c.RetryAfter}
	d, err := drive.NewQueryDriver(qcfg, client, hubs, other, e.now)
	if err != nil {
		return err
	}
	before := c.scrape(e, client)
	started := e.now()
	samples, tl := d.Run(e.ctx)
	res := drive.SummariseQueries(qcfg, samples, tl, e.now().Sub(started))
	res.Config.Principals = max(1, len(c.Token))
	res.CacheHitRatio = drive.HitRatio(before, c.scrape(e, client))
	e.log.Info("queries done", "n", res.Overall.Count, "qps", int(res.Throughput), "p50Ms", res.Overall.P50,
		"p99Ms", res.Overall.P99, "errorRate", res.ErrorRate)
	shape := report.ShapeOf(w)
	if store, err := c.Neo4j.open(e, 2); err == nil {
		if counts, err := history.ReadCounts(e.ctx, store, w.Config.Prefix); err == nil {
			shape.Counts = &counts
		}
		_ = store.Close(e.ctx)
	} else {
		e.log.Warn("counts not read", "err", err)
	}
	return c.Output.finish(e, report.Result{Kind: report.KindQuery, StartedAt: started, Shape: shape, Query: &res})
}

func (c *QueryCmd) scrape(e *env, client *http.Client) drive.CacheCounters {
	if c.MetricsURL == "" {
		return drive.CacheCounters{}
	}
	cc, err := drive.ScrapeCache(e.ctx, client, c.MetricsURL)
	if err != nil {
		e.log.Warn("metrics not scraped", "err", err)
	}
	return cc
}
