package compare

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Methods measured.
const (
	MethodHeadwater = "headwater"
	MethodNaive     = "naive"
)

// Config says what to compare.
type Config struct {
	MaxDepth         int           `json:"maxDepth"` // depths 1..MaxDepth
	Reps             int           `json:"reps"`     // repetitions of every (root, direction, depth)
	NaiveTimeout     time.Duration `json:"naiveTimeoutNs"`
	HeadwaterTimeout time.Duration `json:"headwaterTimeoutNs"` // per page
	MaxNodes         int           `json:"maxNodes"`           // GraphQL maxNodes per page
	// SkipAfterTimeout: once the naive query of (root, direction) timed out (or hit Neo4j's memory limit) at
	// depth d, deeper depths of that pair are not sent (their path set is a superset) and are counted as
	// skipped, at the timeout.
	SkipAfterTimeout bool `json:"skipAfterTimeout"`
	// Warmup asks every (direction, depth) of the first root of each class once, unmeasured, so neither method
	// pays query compilation (each depth is its own Cypher text) or a cold connection inside the sample.
	Warmup bool      `json:"warmup"`
	AsOf   time.Time `json:"asOf"` // the "now" both methods answer as of (epoch-ms precision)
}

// Limits of a configuration.
const (
	maxDepthLimit = 20
	maxRepsLimit  = 1000
)

// ErrConfig reports an invalid comparison configuration.
var ErrConfig = errors.New("invalid compare config")

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	switch {
	case c.MaxDepth < 1 || c.MaxDepth > maxDepthLimit:
		return fmt.Errorf("%w: max depth must be 1..%d", ErrConfig, maxDepthLimit)
	case c.Reps < 1 || c.Reps > maxRepsLimit:
		return fmt.Errorf("%w: reps must be 1..%d", ErrConfig, maxRepsLimit)
	case c.NaiveTimeout <= 0 || c.HeadwaterTimeout <= 0:
		return fmt.Errorf("%w: timeouts must be positive", ErrConfig)
	case c.MaxNodes < 2:
		return fmt.Errorf("%w: max nodes must be at least 2", ErrConfig)
	case c.AsOf.IsZero():
		return fmt.Errorf("%w: asOf must be set", ErrConfig)
	}
	return nil
}

// Case is one question asked of both methods.
type Case struct {
	Root  Root `json:"root"`
	Down  bool `json:"down"`
	Depth int  `json:"depth"`
	Rep   int  `json:"rep"`
}

func (c Case) direction() string {
	if c.Down {
		return "DOWNSTREAM"
	}
	return "UPSTREAM"
}

func (c Case) class() string {
	if c.Root.Hub {
		return "hub"
	}
	return "ordinary"
}

func (c Case) String() string {
	return fmt.Sprintf("%s %s %s/%s depth %d", c.class(), c.direction(), c.Root.Namespace, c.Root.Name, c.Depth)
}

// Outcome is what one method answered for a case.
type Outcome struct {
	Latency     time.Duration `json:"latencyNs"`
	Nodes       int           `json:"nodes"`
	Edges       int           `json:"edges"`
	Pages       int           `json:"pages,omitempty"`
	TimedOut    bool          `json:"timedOut,omitempty"` // naive: the timeout, or Neo4j's memory limit (OutOfMemory)
	OutOfMemory bool          `json:"outOfMemory,omitempty"`
	Skipped     bool          `json:"skipped,omitempty"` // naive: a shallower depth already timed out
	Err         string        `json:"err,omitempty"`
	answer      Answer
}

func (o Outcome) ok() bool { return o.Err == "" && !o.TimedOut && !o.Skipped }

// Sample is one case with both outcomes and the check.
type Sample struct {
	Case      Case      `json:"case"`
	Headwater Outcome   `json:"headwater"`
	Naive     Outcome   `json:"naive"`
	Checked   bool      `json:"checked"`
	Mismatch  *Mismatch `json:"mismatch,omitempty"`
}

// HeadwaterMethod answers a case through the lineage API: the complete answer and the pages it took.
type HeadwaterMethod interface {
	Answer(ctx context.Context, root Root, down bool, depth int, asOf time.Time) (Answer, int, error)
}

// NaiveMethod answers a case with one Cypher query (asOf in epoch ms).
type NaiveMethod interface {
	Answer(ctx context.Context, root Root, down bool, depth int, asOf int64) (Answer, error)
}

var (
	_ HeadwaterMethod = (*Headwater)(nil)
	_ NaiveMethod     = (*Naive)(nil)
)

// Runner asks both methods every case, one at a time (no concurrency: latency of one query on a quiet stack).
type Runner struct {
	cfg   Config
	hw    HeadwaterMethod
	naive NaiveMethod
	now   func() time.Time
}

// NewRunner validates the config.
func NewRunner(cfg Config, hw HeadwaterMethod, naive NaiveMethod, now func() time.Time) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hw == nil || naive == nil || now == nil {
		return nil, fmt.Errorf("%w: both methods and the clock are required", ErrConfig)
	}
	cfg.AsOf = cfg.AsOf.UTC().Truncate(time.Millisecond)
	return &Runner{cfg: cfg, hw: hw, naive: naive, now: now}, nil
}

// Cases lists every (rep, depth, direction, root) in the order they are asked.
func (r *Runner) Cases(roots []Root) []Case {
	var out []Case
	for rep := range r.cfg.Reps {
		for depth := 1; depth <= r.cfg.MaxDepth; depth++ {
			for _, down := range []bool{false, true} {
				for _, root := range roots {
					out = append(out, Case{Root: root, Down: down, Depth: depth, Rep: rep})
				}
			}
		}
	}
	return out
}

type timeoutKey struct {
	root Root
	down bool
	rep  int
}

// Run asks every case of both methods, alternating which goes first so neither always meets a cache the
// other warmed, and checks the answers of every case where both succeeded. progress is called per case.
func (r *Runner) Run(ctx context.Context, roots []Root, progress func(Sample)) []Sample {
	if r.cfg.Warmup {
		r.warmup(ctx, roots)
	}
	timedOut := map[timeoutKey]bool{}
	var out []Sample
	for i, c := range r.Cases(roots) {
		if ctx.Err() != nil {
			break
		}
		s := Sample{Case: c}
		tk := timeoutKey{c.Root, c.Down, c.Rep}
		naive := func() {
			if r.cfg.SkipAfterTimeout && timedOut[tk] {
				s.Naive = Outcome{Skipped: true, Latency: r.cfg.NaiveTimeout}
				return
			}
			s.Naive = r.askNaive(ctx, c)
			if s.Naive.TimedOut {
				timedOut[tk] = true
			}
		}
		if i%2 == 0 {
			naive()
			s.Headwater = r.askHeadwater(ctx, c)
		} else {
			s.Headwater = r.askHeadwater(ctx, c)
			naive()
		}
		if s.Headwater.ok() && s.Naive.ok() {
			s.Checked = true
			if m := Diff(s.Headwater.answer, s.Naive.answer); !m.Empty() {
				s.Mismatch = &m
			}
		}
		if progress != nil {
			progress(s)
		}
		out = append(out, s)
	}
	return out
}

func (r *Runner) askNaive(ctx context.Context, c Case) Outcome {
	start := r.now()
	a, err := r.naive.Answer(ctx, c.Root, c.Down, c.Depth, r.cfg.AsOf.UnixMilli())
	o := Outcome{Latency: r.now().Sub(start), answer: a, Nodes: len(a.Nodes), Edges: len(a.Edges)}
	switch {
	case errors.Is(err, ErrTimeout):
		o.TimedOut, o.Latency = true, r.cfg.NaiveTimeout
	case errors.Is(err, ErrMemoryLimit):
		o.TimedOut, o.OutOfMemory, o.Latency = true, true, r.cfg.NaiveTimeout
	case err != nil:
		o.Err = err.Error()
	}
	return o
}

func (r *Runner) askHeadwater(ctx context.Context, c Case) Outcome {
	start := r.now()
	a, pages, err := r.hw.Answer(ctx, c.Root, c.Down, c.Depth, r.cfg.AsOf)
	o := Outcome{Latency: r.now().Sub(start), answer: a, Nodes: len(a.Nodes), Edges: len(a.Edges), Pages: pages}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// warmup asks both methods every (direction, depth) once for the first ordinary and the first hub root.
func (r *Runner) warmup(ctx context.Context, roots []Root) {
	var firsts []Root
	seen := map[bool]bool{}
	for _, root := range roots {
		if !seen[root.Hub] {
			seen[root.Hub] = true
			firsts = append(firsts, root)
		}
	}
	slow := map[timeoutKey]bool{}
	for depth := 1; depth <= r.cfg.MaxDepth; depth++ {
		for _, down := range []bool{false, true} {
			for _, root := range firsts {
				c, tk := Case{Root: root, Down: down, Depth: depth}, timeoutKey{root, down, 0}
				r.askHeadwater(ctx, c)
				if !slow[tk] && r.askNaive(ctx, c).TimedOut {
					slow[tk] = true
				}
			}
		}
	}
}
