package compare

import (
	"slices"
	"time"

	"github.com/headwater-data/headwater/loadtest/drive"
)

// Ratios are naive / Headwater at each percentile (0 when Headwater has no sample).
type Ratios struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Row is the latency of one (root class, direction, depth); Direction "BOTH" pools both directions.
// Naive percentiles count timed-out (or memory-limited) and skipped queries at the timeout: NaiveTimeouts and
// NaiveSkipped say how many, and any percentile at or above the timeout is then only a lower bound.
type Row struct {
	Class         string            `json:"class"`
	Direction     string            `json:"direction"`
	Depth         int               `json:"depth"`
	Headwater     drive.Percentiles `json:"headwater"`
	Naive         drive.Percentiles `json:"naive"`
	Ratio         Ratios            `json:"ratio"`
	NaiveTimeouts int               `json:"naiveTimeouts"`
	NaiveSkipped  int               `json:"naiveSkipped"`
	Errors        int               `json:"errors"`
	MeanNodes     float64           `json:"meanNodes"` // Headwater answer size (datasets, root included)
	MaxNodes      int               `json:"maxNodes"`
	MaxPages      int               `json:"maxPages"`
}

// MismatchCase is one case whose answers differed.
type MismatchCase struct {
	Case     Case     `json:"case"`
	Mismatch Mismatch `json:"mismatch"`
}

// Result is the comparison's record.
type Result struct {
	Config           Config         `json:"config"`
	Elapsed          time.Duration  `json:"elapsedNs"`
	OrdinaryRoots    int            `json:"ordinaryRoots"`
	HubRoots         int            `json:"hubRoots"`
	Cases            int            `json:"cases"`
	Checked          int            `json:"checked"`
	Mismatched       int            `json:"mismatched"`
	Unchecked        int            `json:"unchecked"`     // an error, timeout or skip on either side
	NaiveTimeouts    int            `json:"naiveTimeouts"` // memory-limit failures included
	NaiveOutOfMemory int            `json:"naiveOutOfMemory"`
	NaiveSkipped     int            `json:"naiveSkipped"`
	NaiveErrors      int            `json:"naiveErrors"`
	HeadwaterErrors  int            `json:"headwaterErrors"`
	Rows             []Row          `json:"rows"`
	Mismatches       []MismatchCase `json:"mismatches,omitempty"` // first maxMismatchCases
	ErrorExamples    []string       `json:"errorExamples,omitempty"`
	CacheHitRatio    *float64       `json:"cacheHitRatio,omitempty"` // Headwater's, over the run; should be 0 or n/a
	CacheMode        string         `json:"cacheMode"`
}

// Bounds of what a result lists.
const (
	maxMismatchCases = 50
	maxErrorExamples = 20
)

type rowKey struct {
	class, dir string
	depth      int
}

// Summarise builds the result from the samples.
func Summarise(cfg Config, roots []Root, samples []Sample, elapsed time.Duration) Result {
	res := Result{Config: cfg, Elapsed: elapsed, Cases: len(samples)}
	for _, r := range roots {
		if r.Hub {
			res.HubRoots++
		} else {
			res.OrdinaryRoots++
		}
	}
	groups := map[rowKey][]Sample{}
	for _, s := range samples {
		res.count(s)
		c := s.Case
		for _, dir := range []string{c.direction(), "BOTH"} {
			k := rowKey{c.class(), dir, c.Depth}
			groups[k] = append(groups[k], s)
		}
	}
	for k, g := range groups {
		res.Rows = append(res.Rows, row(k, g))
	}
	slices.SortFunc(res.Rows, func(a, b Row) int {
		if a.Class != b.Class {
			return cmpStr(b.Class, a.Class) // ordinary before hub
		}
		if a.Direction != b.Direction {
			return cmpStr(a.Direction, b.Direction)
		}
		return a.Depth - b.Depth
	})
	return res
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (res *Result) count(s Sample) {
	if s.Checked {
		res.Checked++
	} else {
		res.Unchecked++
	}
	if s.Mismatch != nil {
		res.Mismatched++
		if len(res.Mismatches) < maxMismatchCases {
			res.Mismatches = append(res.Mismatches, MismatchCase{Case: s.Case, Mismatch: *s.Mismatch})
		}
	}
	if s.Naive.OutOfMemory {
		res.NaiveOutOfMemory++
	}
	switch {
	case s.Naive.TimedOut:
		res.NaiveTimeouts++
	case s.Naive.Skipped:
		res.NaiveSkipped++
	case s.Naive.Err != "":
		res.NaiveErrors++
		res.example("naive " + s.Case.String() + ": " + s.Naive.Err)
	}
	if s.Headwater.Err != "" {
		res.HeadwaterErrors++
		res.example("headwater " + s.Case.String() + ": " + s.Headwater.Err)
	}
}

func (res *Result) example(s string) {
	if len(res.ErrorExamples) < maxErrorExamples {
		res.ErrorExamples = append(res.ErrorExamples, s)
	}
}

func row(k rowKey, g []Sample) Row {
	r := Row{Class: k.class, Direction: k.dir, Depth: k.depth}
	var hw, nv []time.Duration
	nodes := 0
	for _, s := range g {
		if s.Headwater.Err == "" {
			hw = append(hw, s.Headwater.Latency)
			nodes += s.Headwater.Nodes
			r.MaxNodes, r.MaxPages = max(r.MaxNodes, s.Headwater.Nodes), max(r.MaxPages, s.Headwater.Pages)
		} else {
			r.Errors++
		}
		switch {
		case s.Naive.TimedOut:
			r.NaiveTimeouts++
			nv = append(nv, s.Naive.Latency)
		case s.Naive.Skipped:
			r.NaiveSkipped++
			nv = append(nv, s.Naive.Latency)
		case s.Naive.Err == "":
			nv = append(nv, s.Naive.Latency)
		default:
			r.Errors++
		}
	}
	r.Headwater, r.Naive = drive.Summarise(hw), drive.Summarise(nv)
	if len(hw) > 0 {
		r.MeanNodes = float64(nodes) / float64(len(hw))
	}
	r.Ratio = Ratios{P50: ratio(r.Naive.P50, r.Headwater.P50), P95: ratio(r.Naive.P95, r.Headwater.P95),
		P99: ratio(r.Naive.P99, r.Headwater.P99)}
	return r
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
