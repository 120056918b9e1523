package drive

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Mix is the query mix. Shares are probabilities; DepthWeights[i] weighs depth i+1.
type Mix struct {
	DepthWeights  [5]float64    `json:"depthWeights"`
	FieldShare    float64       `json:"fieldShare"`    // granularity FIELD (else DATASET)
	UpstreamShare float64       `json:"upstreamShare"` // direction UPSTREAM (else DOWNSTREAM)
	AsOfShare     float64       `json:"asOfShare"`     // an explicit asOf within the last AsOfWindow
	HubShare      float64       `json:"hubShare"`      // roots that are hubs (else leaf/ordinary datasets)
	CachedShare   float64       `json:"cachedShare"`   // repeats from a small hot set (cacheable), else fresh
	AsOfWindow    time.Duration `json:"asOfWindowNs"`
	MaxNodes      int           `json:"maxNodes"`
}

// DefaultMix leans on the questions users ask most: 1-3 hops, dataset level, mostly current state.
func DefaultMix() Mix {
	return Mix{DepthWeights: [5]float64{0.25, 0.30, 0.25, 0.12, 0.08}, FieldShare: 0.2, UpstreamShare: 0.5,
		AsOfShare: 0.15, HubShare: 0.1, CachedShare: 0.5, AsOfWindow: 300 * 24 * time.Hour, MaxNodes: 500}
}

// ErrMix reports an invalid mix.
var ErrMix = errors.New("invalid query mix")

// Validate checks shares and weights.
func (m Mix) Validate() error {
	total := 0.0
	for _, w := range m.DepthWeights {
		if w < 0 {
			return fmt.Errorf("%w: negative depth weight", ErrMix)
		}
		total += w
	}
	if total == 0 {
		return fmt.Errorf("%w: all depth weights are zero", ErrMix)
	}
	for _, s := range []float64{m.FieldShare, m.UpstreamShare, m.AsOfShare, m.HubShare, m.CachedShare} {
		if s < 0 || s > 1 {
			return fmt.Errorf("%w: shares must be in [0,1]", ErrMix)
		}
	}
	if m.MaxNodes < 1 {
		return fmt.Errorf("%w: max-nodes must be positive", ErrMix)
	}
	return nil
}

// Root is a start dataset with its class.
type Root struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Hub       bool   `json:"hub"`
}

// Spec is one query to send.
type Spec struct {
	Root        Root
	Direction   string
	Depth       int
	Granularity string
	AsOf        *time.Time
	Principal   int // index into the tokens
	Cached      bool
}

const hotSetSize = 64

// planner draws specs from the mix; not safe for concurrent use.
type planner struct {
	mix         Mix
	r           *rand.Rand
	hubs, other []Root
	principals  int
	hot         []Spec
	now         time.Time
}

// RootsFromWorld returns the hub roots and the ordinary (leaf and mid-graph) roots of a world.
func RootsFromWorld(w *gen.World) (hubs, other []Root) {
	for _, id := range w.Hubs {
		d := w.Datasets[id]
		hubs = append(hubs, Root{Namespace: d.Namespace, Name: d.Name, Hub: true})
	}
	for _, id := range w.Leaves() {
		d := w.Datasets[id]
		other = append(other, Root{Namespace: d.Namespace, Name: d.Name})
	}
	return hubs, other
}

func newPlanner(mix Mix, seed uint64, hubs, other []Root, principals int, now time.Time) *planner {
	p := &planner{mix: mix, r: rand.New(rand.NewPCG(seed, 77)), hubs: hubs, other: other,
		principals: max(1, principals), now: now}
	for range hotSetSize {
		p.hot = append(p.hot, p.fresh())
	}
	for i := range p.hot {
		p.hot[i].Cached = true
	}
	return p
}

func (p *planner) next() Spec {
	if p.r.Float64() < p.mix.CachedShare {
		return p.hot[p.r.IntN(len(p.hot))]
	}
	return p.fresh()
}

func (p *planner) fresh() Spec {
	s := Spec{Direction: "DOWNSTREAM", Granularity: "DATASET", Depth: p.depth(), Principal: p.r.IntN(p.principals)}
	if p.r.Float64() < p.mix.UpstreamShare {
		s.Direction = "UPSTREAM"
	}
	if p.r.Float64() < p.mix.FieldShare {
		s.Granularity = "FIELD"
	}
	if p.r.Float64() < p.mix.HubShare && len(p.hubs) > 0 || len(p.other) == 0 {
		s.Root = p.hubs[p.r.IntN(len(p.hubs))]
	} else {
		s.Root = p.other[p.r.IntN(len(p.other))]
	}
	if p.r.Float64() < p.mix.AsOfShare {
		at := p.now.Add(-time.Duration(p.r.Int64N(int64(p.mix.AsOfWindow)))).Truncate(time.Millisecond)
		s.AsOf = &at
	}
	return s
}

func (p *planner) depth() int {
	total := 0.0
	for _, w := range p.mix.DepthWeights {
		total += w
	}
	x := p.r.Float64() * total
	for i, w := range p.mix.DepthWeights {
		if x < w {
			return i + 1
		}
		x -= w
	}
	return len(p.mix.DepthWeights)
}
