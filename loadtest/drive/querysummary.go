package drive

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DepthRow is the latency at one depth, ordinary and hub roots apart.
type DepthRow struct {
	Depth    int         `json:"depth"`
	Ordinary Percentiles `json:"ordinary"`
	Hub      Percentiles `json:"hub"`
}

// FanoutRow is the latency of answers whose size (nodes returned) falls in [Lo, Hi].
type FanoutRow struct {
	Bucket string      `json:"bucket"`
	Lo     int         `json:"lo"`
	Hi     int         `json:"hi"`
	P      Percentiles `json:"latency"`
}

// QueryResult is the summary of a query run.
type QueryResult struct {
	Config         QueryConfig            `json:"config"`
	Elapsed        time.Duration          `json:"elapsedNs"`
	Overall        Percentiles            `json:"overall"`
	Ordinary       Percentiles            `json:"ordinary"`
	Hub            Percentiles            `json:"hub"`
	Cached         Percentiles            `json:"cached"`
	Uncached       Percentiles            `json:"uncached"`
	ByGranularity  map[string]Percentiles `json:"byGranularity"`
	ByDepth        []DepthRow             `json:"byDepth"`
	ByFanout       []FanoutRow            `json:"byFanout"`
	Throughput     float64                `json:"throughputPerSec"`
	ErrorRate      float64                `json:"errorRate"`
	TruncationRate float64                `json:"truncationRate"`
	Errors         map[string]int         `json:"errors"`
	CacheHitRatio  *float64               `json:"cacheHitRatio,omitempty"`
	Timeline       []Second               `json:"timeline"`
}

var fanoutBuckets = [][2]int{{0, 1}, {2, 10}, {11, 50}, {51, 200}, {201, 500}, {501, 1 << 30}}

const maxDepth = 5

// SummariseQueries turns samples into the result (latencies of failed queries are left out of percentiles).
func SummariseQueries(cfg QueryConfig, samples []QuerySample, tl []Second, elapsed time.Duration) QueryResult {
	res := QueryResult{Config: cfg, Elapsed: elapsed, Timeline: tl, Errors: map[string]int{},
		ByGranularity: map[string]Percentiles{}}
	var all, ord, hub, cached, uncached []time.Duration
	byGran := map[string][]time.Duration{}
	byDepth := make([][2][]time.Duration, maxDepth+1)
	byFan := make([][]time.Duration, len(fanoutBuckets))
	truncated := 0
	for _, s := range samples {
		if s.Err != "" {
			res.Errors[s.Err]++
			continue
		}
		all = append(all, s.Latency)
		if s.Truncated {
			truncated++
		}
		h := 0
		if s.Spec.Root.Hub {
			hub, h = append(hub, s.Latency), 1
		} else {
			ord = append(ord, s.Latency)
		}
		if s.Spec.Cached {
			cached = append(cached, s.Latency)
		} else {
			uncached = append(uncached, s.Latency)
		}
		byGran[s.Spec.Granularity] = append(byGran[s.Spec.Granularity], s.Latency)
		if s.Spec.Depth >= 1 && s.Spec.Depth <= maxDepth {
			byDepth[s.Spec.Depth][h] = append(byDepth[s.Spec.Depth][h], s.Latency)
		}
		for i, b := range fanoutBuckets {
			if s.Nodes >= b[0] && s.Nodes <= b[1] {
				byFan[i] = append(byFan[i], s.Latency)
			}
		}
	}
	res.Overall, res.Ordinary, res.Hub = Summarise(all), Summarise(ord), Summarise(hub)
	res.Cached, res.Uncached = Summarise(cached), Summarise(uncached)
	for g, d := range byGran {
		res.ByGranularity[g] = Summarise(d)
	}
	for dep := 1; dep <= maxDepth; dep++ {
		res.ByDepth = append(res.ByDepth, DepthRow{Depth: dep, Ordinary: Summarise(byDepth[dep][0]), Hub: Summarise(byDepth[dep][1])})
	}
	for i, b := range fanoutBuckets {
		res.ByFanout = append(res.ByFanout, FanoutRow{Bucket: bucketName(b), Lo: b[0], Hi: b[1], P: Summarise(byFan[i])})
	}
	if n := len(samples); n > 0 {
		res.ErrorRate = float64(n-len(all)) / float64(n)
		if s := elapsed.Seconds(); s > 0 {
			res.Throughput = float64(len(all)) / s
		}
	}
	if len(all) > 0 {
		res.TruncationRate = float64(truncated) / float64(len(all))
	}
	return res
}

func bucketName(b [2]int) string {
	if b[1] >= 1<<30 {
		return fmt.Sprintf("%d+", b[0])
	}
	return fmt.Sprintf("%d-%d", b[0], b[1])
}

// Cache counter names the service exports (a hits/requests pair per cache, summed over labels).
const (
	MetricCacheHits     = "headwater_cache_hits_total"
	MetricCacheRequests = "headwater_cache_requests_total"
)

// CacheCounters are the summed cache counters at one moment; OK is false when the service does not export them.
type CacheCounters struct {
	Hits, Requests float64
	OK             bool
}

// ScrapeCache reads the Prometheus text exposition and sums the cache counters.
func ScrapeCache(ctx context.Context, client Doer, url string) (CacheCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return CacheCounters{}, fmt.Errorf("metrics request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return CacheCounters{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return CacheCounters{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	c := parseCacheCounters(b)
	// A server that has not served a cached request yet has no cache counters: that is zero, not unknown.
	c.OK = resp.StatusCode == http.StatusOK
	return c, nil
}

func parseCacheCounters(b []byte) CacheCounters {
	var c CacheCounters
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := metricLine(line)
		if !ok {
			continue
		}
		switch name {
		case MetricCacheHits:
			c.Hits += val
			c.OK = true
		case MetricCacheRequests:
			c.Requests += val
			c.OK = true
		}
	}
	return c
}

func metricLine(line string) (string, float64, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return "", 0, false
	}
	name := f[0]
	if i := strings.IndexByte(name, '{'); i >= 0 {
		name = name[:i]
		// labels may contain spaces: the value is the first field after the closing brace
		if j := strings.LastIndexByte(line, '}'); j >= 0 {
			f = strings.Fields(line[j+1:])
			if len(f) == 0 {
				return "", 0, false
			}
			v, err := strconv.ParseFloat(f[0], 64)
			return name, v, err == nil
		}
	}
	v, err := strconv.ParseFloat(f[1], 64)
	return name, v, err == nil
}

// HitRatio is the ratio over the interval between two scrapes, nil when unknown.
func HitRatio(before, after CacheCounters) *float64 {
	if !before.OK || !after.OK || after.Requests <= before.Requests {
		return nil
	}
	r := (after.Hits - before.Hits) / (after.Requests - before.Requests)
	return &r
}
