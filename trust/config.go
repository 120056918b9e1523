// Package trust computes Headwater's trust signals against the expected-job inventory (package inventory):
// which expected jobs report within their schedule, runs without a terminal event, producers gone quiet,
// rejected events, unresolved identities, edge freshness and column-lineage coverage, each with its
// denominator and window (docs/trust.md). It serves the `coverage` GraphQL query, the Prometheus gauges of
// every signal (a sampler computes them for everything), and, through ExpectedWriters, the expected-job
// status the lineage gaps ask about.
//
// Invariants: every figure counts only what the caller may see (expected jobs and runs: DESCRIBE on the job;
// edges: DESCRIBE on the job and VIEW_LINEAGE on the dataset; datasets and unresolved identities: DESCRIBE;
// producer-keyed figures: the caller's own principal unless it may describe everything), so a figure never
// names or counts what is hidden; permissionsFiltered is set for every caller without a global grant. No
// figure is guessed: an expected job matches a reported job only by the explicit rules of its source.
package trust

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultWindow      = 7 * 24 * time.Hour
	DefaultMaxWindow   = 90 * 24 * time.Hour
	DefaultReportGrace = time.Hour
	// DefaultWriteGrace is how long after a catalog commit (an Iceberg snapshot the catalog sync recorded) a run
	// may still report writing it before the commit counts as an UNREPORTED_WRITE.
	DefaultWriteGrace = time.Hour
	// MaxCommitsJudged is how many of a table's latest catalog commits the UNREPORTED_WRITE gap judges ("3 of the
	// last 20 commits to this table came from no instrumented job").
	MaxCommitsJudged = 20
	// MaxCommitGroups bounds the rows the reported-writes figure reads (a table's commits in the window grouped by
	// the jobs that reported them: about one or two rows per table, so 200,000 covers the design's 30,000 tables
	// with room).
	MaxCommitGroups       = 200_000
	DefaultRunGrace       = 6 * time.Hour
	DefaultQuietLookback  = 14 * 24 * time.Hour
	DefaultQuietFactor    = 3.0
	DefaultQuietMin       = time.Hour
	DefaultStaleMin       = 24 * time.Hour
	DefaultStaleFactor    = 3.0
	DefaultSampleInterval = 5 * time.Minute
	// MaxItemsPage is the most items one page of a figure returns (first is 1..MaxItemsPage, default 20).
	MaxItemsPage = 500
	// MaxItemsKept bounds the items one figure keeps per request (the rest are counted, not listed).
	MaxItemsKept = 20_000
)

// Config holds the signals' thresholds.
type Config struct {
	Window        time.Duration `help:"Default window of the windowed signals (runs started, rejected events, unresolved identities)." default:"168h" env:"HEADWATER_TRUST_WINDOW" yaml:"window"`
	MaxWindow     time.Duration `help:"Largest window a coverage request may ask for." default:"2160h" env:"HEADWATER_TRUST_MAX_WINDOW" yaml:"maxWindow"`
	ReportGrace   time.Duration `help:"Grace after an expected job's schedule before it counts as not reporting." default:"1h" env:"HEADWATER_TRUST_REPORT_GRACE" yaml:"reportGrace"`
	WriteGrace    time.Duration `help:"A catalog commit (Iceberg snapshot) that no run reported writing within this long is an UNREPORTED_WRITE gap." default:"1h" env:"HEADWATER_TRUST_WRITE_GRACE" yaml:"writeGrace"`
	RunGrace      time.Duration `help:"A run with START but no terminal event counts once it is older than this." default:"6h" env:"HEADWATER_TRUST_RUN_GRACE" yaml:"runGrace"`
	QuietLookback time.Duration `help:"History a producer's usual gap between events is measured over." default:"336h" env:"HEADWATER_TRUST_QUIET_LOOKBACK" yaml:"quietLookback"`
	QuietFactor   float64       `help:"A producer is quiet after its P95 gap between events times this factor." default:"3" env:"HEADWATER_TRUST_QUIET_FACTOR" yaml:"quietFactor"`
	QuietMin      time.Duration `help:"A producer is never quiet sooner than this after its last event." default:"1h" env:"HEADWATER_TRUST_QUIET_MIN" yaml:"quietMin"`
	// QuietFactors overrides the factor per producer principal: "principal=factor,principal=factor".
	QuietFactors   string        `help:"Per-producer quiet factors: principal=factor,... (overrides quiet-factor)." default:"" env:"HEADWATER_TRUST_QUIET_FACTORS" yaml:"quietFactors"`
	StaleMin       time.Duration `help:"Smallest staleness threshold of an observed edge (as lineage.stale-min)." default:"24h" env:"HEADWATER_TRUST_STALE_MIN" yaml:"staleMin"`
	StaleFactor    float64       `help:"Edge staleness threshold as a multiple of the job's usual run interval (as lineage.stale-factor)." default:"3" env:"HEADWATER_TRUST_STALE_FACTOR" yaml:"staleFactor"`
	SampleInterval time.Duration `help:"How often the metrics sampler recomputes every signal for everything (0: off)." default:"5m" env:"HEADWATER_TRUST_SAMPLE_INTERVAL" yaml:"sampleInterval"`
	// TrendScopeInterval is how often the sampler also stores a point per namespace, criticality, producer and
	// configured scope (at most MaxTrendScopes of them per round).
	TrendScopeInterval time.Duration `help:"How often the sampler stores per-namespace, criticality, producer and configured-scope trend points (0: off)." default:"1h" env:"HEADWATER_TRUST_TREND_SCOPE_INTERVAL" yaml:"trendScopeInterval"`
	// TrendScopes are named sets of namespaces sampled as one scope: "name=ns1,ns2;name2=ns3".
	TrendScopes    string        `help:"Named trend scopes: name=namespace,namespace;name=... (a team's namespaces)." default:"" env:"HEADWATER_TRUST_TREND_SCOPES" yaml:"trendScopes"`
	CanaryInterval time.Duration `help:"How often serve checks every registered canary against the lineage answers (0: off)." default:"5m" env:"HEADWATER_TRUST_CANARY_INTERVAL" yaml:"canaryInterval"`
}

// WithDefaults fills zero settings with the defaults.
func (c Config) WithDefaults() Config {
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defD(&c.Window, DefaultWindow)
	defD(&c.MaxWindow, DefaultMaxWindow)
	defD(&c.ReportGrace, DefaultReportGrace)
	defD(&c.WriteGrace, DefaultWriteGrace)
	defD(&c.RunGrace, DefaultRunGrace)
	defD(&c.QuietLookback, DefaultQuietLookback)
	defD(&c.QuietMin, DefaultQuietMin)
	defD(&c.StaleMin, DefaultStaleMin)
	if c.QuietFactor == 0 {
		c.QuietFactor = DefaultQuietFactor
	}
	if c.StaleFactor == 0 {
		c.StaleFactor = DefaultStaleFactor
	}
	return c
}

// Validate reports the first invalid setting by name (after defaults).
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Window < 0 || c.MaxWindow < c.Window:
		return fmt.Errorf("trust.window: must be positive and at most trust.max-window (%s), got %s", c.MaxWindow, c.Window)
	case c.ReportGrace < 0 || c.WriteGrace < 0 || c.RunGrace < 0 || c.QuietMin < 0 || c.StaleMin < 0 || c.SampleInterval < 0 || c.CanaryInterval < 0 ||
		c.TrendScopeInterval < 0:
		return errors.New("trust: report-grace, write-grace, run-grace, quiet-min, stale-min, sample-interval, trend-scope-interval and canary-interval must not be negative")
	case c.QuietFactor <= 0 || c.StaleFactor <= 0:
		return errors.New("trust: quiet-factor and stale-factor must be positive")
	case c.QuietLookback < time.Hour:
		return fmt.Errorf("trust.quiet-lookback: must be at least 1h, got %s", c.QuietLookback)
	}
	if _, err := c.factors(); err != nil {
		return err
	}
	_, err := c.trendScopes()
	return err
}

// trendScopes parses TrendScopes.
func (c Config) trendScopes() (map[string][]string, error) {
	out := map[string][]string{}
	for part := range strings.SplitSeq(c.TrendScopes, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, list, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		var nss []string
		for ns := range strings.SplitSeq(list, ",") {
			if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(nss, ns) {
				nss = append(nss, ns)
			}
		}
		switch {
		case !ok || name == "" || len(nss) == 0:
			return nil, fmt.Errorf("trust.trend-scopes: %q is not name=namespace,namespace", part)
		case len(nss) > MaxScopeNamespaces:
			return nil, fmt.Errorf("trust.trend-scopes: scope %q lists %d namespaces, at most %d", name, len(nss), MaxScopeNamespaces)
		case out[name] != nil:
			return nil, fmt.Errorf("trust.trend-scopes: scope %q is named twice", name)
		}
		slices.Sort(nss)
		out[name] = nss
	}
	return out, nil
}

// factors parses QuietFactors.
func (c Config) factors() (map[string]float64, error) {
	out := map[string]float64{}
	for part := range strings.SplitSeq(c.QuietFactors, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, f, ok := strings.Cut(part, "=")
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if !ok || p == "" || err != nil || v <= 0 {
			return nil, fmt.Errorf("trust.quiet-factors: %q is not principal=factor with a positive factor", part)
		}
		out[strings.TrimSpace(p)] = v
	}
	return out, nil
}

// ParseWindow reads a window argument: a Go duration (36h, 90m), days (7d) or an ISO 8601 duration (P7D, PT6H).
func ParseWindow(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	if d, ok := isoDuration(s); ok {
		return d, nil
	}
	return 0, fmt.Errorf("%w: window: %q is not a duration such as 24h, 7d or PT6H", ErrInvalid, s)
}

var isoRe = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

func isoDuration(s string) (time.Duration, bool) {
	m := isoRe.FindStringSubmatch(strings.ToUpper(s))
	if m == nil {
		return 0, false
	}
	var d time.Duration
	for i, u := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if n, err := strconv.Atoi(m[i+1]); err == nil {
			d += time.Duration(n) * u
		}
	}
	return d, d > 0
}
