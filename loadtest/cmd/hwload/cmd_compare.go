package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/headwater-data/headwater/loadtest/compare"
	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/report"
)

// CompareCmd measures Headwater's lineage answer against the naive variable-length Cypher query on the same
// roots, depths and asOf, and checks that both return the same datasets and edges.
type CompareCmd struct {
	World            WorldFlags    `embed:""`
	Neo4j            Neo4jFlags    `embed:""`
	Output           OutputFlags   `embed:""`
	URL              string        `help:"GraphQL endpoint (run the service with --redis-addr= so answers are uncached)." default:"http://127.0.0.1:8080/graphql"`
	MetricsURL       string        `help:"Prometheus endpoint for headwater_cache_* counters, to show the cache was off (empty: skip)." default:"http://127.0.0.1:9090/metrics"`
	Token            string        `help:"Bearer token of a principal that may see everything (empty: no header)." default:"" env:"HWLOAD_TOKEN"`
	Roots            int           `help:"Ordinary (leaf) roots." default:"20"`
	HubRoots         int           `help:"Hub roots." default:"5"`
	MaxDepth         int           `help:"Depths 1..N." default:"5"`
	Reps             int           `help:"Repetitions of every (root, direction, depth)." default:"3"`
	NaiveTimeout     time.Duration `help:"Per-query timeout of the naive Cypher query (server-side transaction timeout too)." default:"30s"`
	Timeout          time.Duration `help:"Per-page timeout of the GraphQL query." default:"60s"`
	MaxNodes         int           `help:"GraphQL maxNodes per page (cursors are followed until the answer is complete)." default:"5000"`
	MaxPages         int           `help:"Give up following cursors after this many pages." default:"1000"`
	SkipAfterTimeout bool          `help:"After a naive timeout at depth d, count deeper depths of that root and direction as skipped instead of sending them." default:"true" negatable:""`
	Warmup           bool          `help:"Ask every (direction, depth) once per root class first, unmeasured (query compilation, connections)." default:"true" negatable:""`
	AsOf             string        `help:"asOf of both methods (RFC 3339); empty: now at the start of the run." default:""`
}

// Run compares and writes the result.
func (c *CompareCmd) Run(e *env) error {
	asOf := e.now()
	if c.AsOf != "" {
		t, err := time.Parse(time.RFC3339Nano, c.AsOf)
		if err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
		asOf = t
	}
	w, err := c.World.world(e.now())
	if err != nil {
		return err
	}
	hubs, other := drive.RootsFromWorld(w)
	roots := append(pick(other, c.Roots, c.World.Seed), pick(hubs, c.HubRoots, c.World.Seed)...)
	if len(roots) == 0 {
		return fmt.Errorf("no roots: the world has no leaves or hubs")
	}
	store, err := c.Neo4j.open(e, 4)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close(e.ctx) }()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	cfg := compare.Config{MaxDepth: c.MaxDepth, Reps: c.Reps, NaiveTimeout: c.NaiveTimeout, HeadwaterTimeout: c.Timeout,
		MaxNodes: c.MaxNodes, SkipAfterTimeout: c.SkipAfterTimeout, Warmup: c.Warmup, AsOf: asOf.UTC().Truncate(time.Millisecond)}
	hw := &compare.Headwater{URL: c.URL, Token: c.Token, Client: client, MaxNodes: c.MaxNodes, Timeout: c.Timeout, MaxPages: c.MaxPages}
	naive := &compare.Naive{Driver: store.Driver, Database: store.Database, Timeout: c.NaiveTimeout}
	r, err := compare.NewRunner(cfg, hw, naive, e.now)
	if err != nil {
		return err
	}
	before := scrapeCache(e, client, c.MetricsURL)
	started := e.now()
	samples := r.Run(e.ctx, roots, progressLog(e))
	res := compare.Summarise(cfg, roots, samples, e.now().Sub(started))
	after := scrapeCache(e, client, c.MetricsURL)
	res.CacheHitRatio, res.CacheMode = drive.HitRatio(before, after), cacheMode(before, after)
	e.log.Info("comparison done", "cases", res.Cases, "checked", res.Checked, "mismatched", res.Mismatched,
		"naiveTimeouts", res.NaiveTimeouts, "headwaterErrors", res.HeadwaterErrors, "naiveErrors", res.NaiveErrors)
	shape := report.ShapeOf(w)
	if counts, err := history.ReadCounts(e.ctx, store, w.Config.Prefix); err == nil {
		shape.Counts = &counts
	} else {
		e.log.Warn("counts not read", "err", err)
	}
	if err := c.Output.finish(e, report.Result{Kind: report.KindCompare, StartedAt: started, Shape: shape, Compare: &res}); err != nil {
		return err
	}
	if res.Mismatched > 0 {
		return fmt.Errorf("%d of %d checked cases differ between headwater and the naive query (see the result)", res.Mismatched, res.Checked)
	}
	return nil
}

// pick takes n roots in a seeded random order (all of them when n exceeds the list).
func pick(roots []drive.Root, n int, seed uint64) []drive.Root {
	out := append([]drive.Root(nil), roots...)
	r := rand.New(rand.NewPCG(seed, 4242))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

const progressEvery = 50

func progressLog(e *env) func(compare.Sample) {
	n := 0
	return func(s compare.Sample) {
		n++
		if s.Mismatch != nil {
			e.log.Warn("answers differ", "case", s.Case, "mismatch", s.Mismatch.String())
		}
		if s.Headwater.Err != "" {
			e.log.Warn("headwater failed", "case", s.Case, "err", s.Headwater.Err)
		}
		if s.Naive.Err != "" {
			e.log.Warn("naive query failed", "case", s.Case, "err", s.Naive.Err)
		}
		if n%progressEvery == 0 {
			e.log.Info("progress", "cases", n, "last", s.Case, "headwaterMs", s.Headwater.Latency.Milliseconds(),
				"naiveMs", s.Naive.Latency.Milliseconds(), "nodes", s.Headwater.Nodes)
		}
	}
}

func scrapeCache(e *env, client *http.Client, url string) drive.CacheCounters {
	if url == "" {
		return drive.CacheCounters{}
	}
	cc, err := drive.ScrapeCache(e.ctx, client, url)
	if err != nil {
		e.log.Warn("metrics not scraped", "err", err)
	}
	return cc
}

// cacheMode says what the service's cache counters showed over the run.
func cacheMode(before, after drive.CacheCounters) string {
	switch {
	case !before.OK || !after.OK:
		return "unknown (no headwater_cache_* counters scraped)"
	case after.Requests <= before.Requests:
		return "off (no cache requests during the run)"
	}
	return fmt.Sprintf("ON: %.0f cache requests, %.0f hits during the run (Headwater figures are not uncached)",
		after.Requests-before.Requests, after.Hits-before.Hits)
}
