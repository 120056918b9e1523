package governance

import (
	"slices"
	"strings"

	"github.com/headwater-data/headwater/api"
)

// Origin is a field (by public id) the flow starts from, with the rules of its tag's class.
type Origin struct {
	ID    string
	Rules Rules
}

// Input is what a flow is computed from: its origins, the downstream column edges the caller may see (public
// ids), the depth, and what the walk could not go past.
type Input struct {
	Origins []Origin
	Edges   []*api.LineageEdge
	Depth   int
	// Blocked are fields whose tags the caller may not see (no VIEW_SENSITIVE on their dataset): the flow does not
	// enter them, and stops before them for PERMISSIONS.
	Blocked map[string]bool
	// Waiting are fields a budget kept the walk from expanding: a carrying one is a BUDGET stop.
	Waiting map[string]bool
	// NoColumn are fields whose dataset has dataset-level lineage downstream but no column lineage from them: a
	// carrying one is a NO_COLUMN_LINEAGE stop ("unknown", never "not reached").
	NoColumn map[string]bool
	// Explicit are the governance blocks in force at the flow's instant (ADR 0067), judged before the rules.
	Explicit Blocks
}

// Block is an explicit governance block: who set it and why.
type Block struct{ By, Reason string }

// EdgeRef names a column edge by its fields' public ids and its job's key.
type EdgeRef struct{ From, To, JobKey string }

// Blocks are explicit governance blocks: on a field (by public id: it neither carries nor lets through, so no
// edge into or out of it is crossed) or on one edge (not crossed whatever its transformations).
type Blocks struct {
	Fields map[string]Block
	Edges  map[EdgeRef]Block
}

// Of is the block that stops the flow across e, if any: the edge's own first, then its target's, then its
// source's.
func (b Blocks) Of(e *api.LineageEdge) (Block, bool) {
	if bl, ok := b.Edges[EdgeRef{From: e.From, To: e.To, JobKey: e.JobKey}]; ok {
		return bl, true
	}
	if bl, ok := b.Fields[e.To]; ok {
		return bl, true
	}
	bl, ok := b.Fields[e.From]
	return bl, ok
}

// Hop is one edge of a path with its judgement.
type Hop struct {
	Edge *api.LineageEdge
	Step Step
}

// Reach is a field the flow reached: its strongest effect, the origin and the shortest path of that effect.
type Reach struct {
	ID     string
	Effect api.PiiEffect
	Origin string
	Path   []Hop
}

// Stop is where the flow went no further from a carrying field, and why; Edge is the edge it did not cross
// (masked, aggregation), nil otherwise.
type Stop struct {
	ID     string
	Reason api.PiiStopReason
	Edge   *api.LineageEdge
	Step   Step
	// Block is the explicit block of a BLOCKED stop.
	Block Block
}

// Flow is a computed flow: reached fields (by effect, then distance, then id) and stops (by field, reason, edge).
type Flow struct {
	Reached []Reach
	Stops   []Stop
}

// mark is one field's best reach so far.
type mark struct {
	effect api.PiiEffect
	dist   int
	path   []Hop // empty for an origin
	origin string
}

func rank(e api.PiiEffect) int {
	switch e {
	case api.PiiCarried:
		return 3
	case api.PiiAggregated:
		return 2
	case api.PiiInfluenced:
		return 1
	}
	return 0
}

// Propagate computes the flow of the origins over the edges: per group of origins sharing rules, the fields
// carrying the tag (only carrying steps), then as aggregated (carrying or aggregating steps), then influenced
// (one INDIRECT step from a field of either kind), each by its shortest path within the depth; then the stops.
func Propagate(in Input) Flow {
	adj := adjacency(in.Edges)
	best := map[string]mark{}
	var stops []Stop
	for _, group := range groups(in.Origins) {
		g := search{in: in, adj: adj, rules: group[0].Rules, marks: map[string]mark{}}
		g.run(group)
		for id, m := range g.marks {
			if cur, ok := best[id]; !ok || better(m, cur) {
				best[id] = m
			}
		}
		stops = append(stops, g.stops()...)
	}
	return Flow{Reached: reachedOf(best), Stops: dedupeStops(stops)}
}

func better(a, b mark) bool {
	if rank(a.effect) != rank(b.effect) {
		return rank(a.effect) > rank(b.effect)
	}
	return a.dist < b.dist
}

// groups splits origins by rules, in a deterministic order (by first origin id).
func groups(origins []Origin) [][]Origin {
	sorted := slices.Clone(origins)
	slices.SortFunc(sorted, func(a, b Origin) int { return strings.Compare(a.ID, b.ID) })
	sorted = slices.CompactFunc(sorted, func(a, b Origin) bool { return a.ID == b.ID })
	var out [][]Origin
	idx := map[Rules]int{}
	for _, o := range sorted {
		i, ok := idx[o.Rules]
		if !ok {
			i = len(out)
			idx[o.Rules] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], o)
	}
	return out
}

func adjacency(edges []*api.LineageEdge) map[string][]*api.LineageEdge {
	adj := map[string][]*api.LineageEdge{}
	for _, e := range edges {
		adj[e.From] = append(adj[e.From], e)
	}
	for _, list := range adj {
		slices.SortFunc(list, func(a, b *api.LineageEdge) int { return strings.Compare(a.To+"\x00"+a.ID, b.To+"\x00"+b.ID) })
	}
	return adj
}

// search is the flow of one group of origins sharing rules.
type search struct {
	in    Input
	adj   map[string][]*api.LineageEdge
	rules Rules
	marks map[string]mark
}

func (g *search) run(origins []Origin) {
	for _, o := range origins {
		g.marks[o.ID] = mark{effect: api.PiiCarried, origin: o.ID}
	}
	g.spread(func(e api.PiiEffect) bool { return e == api.PiiCarried })
	g.spread(func(e api.PiiEffect) bool { return e == api.PiiCarried || e == api.PiiAggregated })
	g.influence()
}

// spread extends the carrying marks (in order of distance) along the steps whose effect passes: a field not
// marked yet takes the weaker of its source's effect and the step's.
func (g *search) spread(pass func(api.PiiEffect) bool) {
	buckets := make([][]string, g.in.Depth+1)
	for _, id := range sortedKeys(g.marks) {
		if m := g.marks[id]; m.dist <= g.in.Depth {
			buckets[m.dist] = append(buckets[m.dist], id)
		}
	}
	for d := 0; d < g.in.Depth; d++ {
		for _, id := range buckets[d] {
			src := g.marks[id]
			for _, e := range g.adj[id] {
				if _, explicit := g.in.Explicit.Of(e); explicit {
					continue
				}
				st := Judge(e.Transformations, g.rules)
				if !pass(st.Effect) || g.in.Blocked[e.To] {
					continue
				}
				if _, seen := g.marks[e.To]; seen {
					continue
				}
				eff := src.effect
				if rank(st.Effect) < rank(eff) {
					eff = st.Effect
				}
				g.marks[e.To] = mark{effect: eff, dist: d + 1, path: extend(src.path, e, st), origin: src.origin}
				buckets[d+1] = append(buckets[d+1], e.To)
			}
		}
	}
}

// influence marks the fields one INDIRECT step from a carrying field (never further: influence does not carry).
func (g *search) influence() {
	for _, id := range g.carrying() {
		src := g.marks[id]
		if src.dist >= g.in.Depth {
			continue
		}
		for _, e := range g.adj[id] {
			if _, explicit := g.in.Explicit.Of(e); explicit {
				continue
			}
			st := Judge(e.Transformations, g.rules)
			if st.Effect != api.PiiInfluenced || g.in.Blocked[e.To] {
				continue
			}
			m := mark{effect: api.PiiInfluenced, dist: src.dist + 1, path: extend(src.path, e, st), origin: src.origin}
			if cur, seen := g.marks[e.To]; !seen || better(m, cur) {
				g.marks[e.To] = m
			}
		}
	}
}

// carrying lists the fields carrying the tag (as such or aggregated), by id.
func (g *search) carrying() []string {
	var out []string
	for _, id := range sortedKeys(g.marks) {
		if e := g.marks[id].effect; e == api.PiiCarried || e == api.PiiAggregated {
			out = append(out, id)
		}
	}
	return out
}

// stops are where the flow of this group went no further from a carrying field.
func (g *search) stops() []Stop {
	var out []Stop
	for _, id := range g.carrying() {
		m := g.marks[id]
		onward := false
		blocked := false
		for _, e := range g.adj[id] {
			if bl, explicit := g.in.Explicit.Of(e); explicit {
				out = append(out, Stop{ID: id, Reason: api.PiiStopBlocked, Edge: e, Block: bl})
				continue
			}
			st := Judge(e.Transformations, g.rules)
			switch {
			case st.Stop != "":
				out = append(out, Stop{ID: id, Reason: st.Stop, Edge: e, Step: st})
			case g.in.Blocked[e.To]:
				blocked = true
			case !g.reached(e.To):
				onward = true
			}
		}
		if blocked {
			out = append(out, Stop{ID: id, Reason: api.PiiStopPermissions})
		}
		if onward && m.dist >= g.in.Depth {
			out = append(out, Stop{ID: id, Reason: api.PiiStopDepth})
		}
		if g.in.Waiting[id] && m.dist < g.in.Depth {
			out = append(out, Stop{ID: id, Reason: api.PiiStopBudget})
		}
		if g.in.NoColumn[id] {
			out = append(out, Stop{ID: id, Reason: api.PiiStopNoColumnLineage})
		}
	}
	return out
}

func (g *search) reached(id string) bool { _, ok := g.marks[id]; return ok }

func reachedOf(best map[string]mark) []Reach {
	var out []Reach
	for id, m := range best {
		if len(m.path) == 0 {
			continue // an origin
		}
		out = append(out, Reach{ID: id, Effect: m.effect, Origin: m.origin, Path: m.path})
	}
	slices.SortFunc(out, func(a, b Reach) int {
		if rank(a.Effect) != rank(b.Effect) {
			return rank(b.Effect) - rank(a.Effect)
		}
		if len(a.Path) != len(b.Path) {
			return len(a.Path) - len(b.Path)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// extend is a path one hop longer (a copy: paths share no backing array).
func extend(path []Hop, e *api.LineageEdge, st Step) []Hop {
	return append(slices.Clip(path), Hop{Edge: e, Step: st})
}

func dedupeStops(stops []Stop) []Stop {
	key := func(s Stop) string {
		e := ""
		if s.Edge != nil {
			e = s.Edge.ID
		}
		return s.ID + "\x00" + string(s.Reason) + "\x00" + e
	}
	slices.SortFunc(stops, func(a, b Stop) int { return strings.Compare(key(a), key(b)) })
	return slices.CompactFunc(stops, func(a, b Stop) bool { return key(a) == key(b) })
}

func sortedKeys(m map[string]mark) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
