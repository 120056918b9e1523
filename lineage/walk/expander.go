package walk

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// walkSpec is a resolved, validated lineage request (Spec, as the walk reads it).
type walkSpec struct {
	depth      int // requested total depth
	maxNodes   int
	asOf       int64
	asOfKey    string
	pubs       []string
	ec         edgeCtx
	principal  authz.Principal
	startNodes []Node // the start node(s), returned on the first page
	firstPage  bool
	maxHops    int
	fanOut     int
	deadline   time.Time
	clock      func() time.Time
	startNames map[string]Names // identities of the start nodes (checked for VIEW_LINEAGE by the first hop)
	// oneShot is an answer without a cursor (impact): fan-out continuations never run, so a level with some
	// does not hold the deeper ones back; clamped: the request's depth was cut to maxHops (Spec.Clamped).
	oneShot, clamped bool
}

// Node is a node a walk reached, to materialise at the end of a page.
type Node struct {
	Kind HopKind
	Key  string
}

// walk is the state of one page of a traversal.
type walk struct {
	spec    walkSpec
	reader  NeighborReader
	gate    gate
	redact  bool             // REDACT mode: placeholders for hidden neighbours
	names   map[string]Names // identities of the nodes reached so far (the next hop's frontier)
	reached hashSet          // direction|key already reached (never expanded twice per direction)
	nodes   hashSet          // node keys already returned (this page or earlier ones)
	edges   hashSet          // edge ids already returned

	newNodes []Node
	newEdges []*api.LineageEdge
	markers  []api.FanOutMarker
	gaps     gapSet
	deferred []Entry // fan-out continuations for the next page
	pending  []Entry // unexpanded frontier when a budget stopped the page
	held     []Entry // entries of a direction whose level waits for fan-out continuations
	stops    stops   // which budgets stopped the page
	gens     map[string]int64
	jobs     map[string]bool      // jobs on returned edges
	flagged  map[string]edgeFlags // gap facts of the edges read this page
	// restricted are this page's REDACT placeholders, one per visible node and direction with hidden neighbours.
	restricted []*api.RestrictedNode
}

func newWalk(spec walkSpec, reader NeighborReader, g gate, st *State) *walk {
	w := &walk{spec: spec, reader: reader, gate: g, redact: g.Redact(), names: map[string]Names{},
		reached: hashSet{}, nodes: hashSet{}, edges: hashSet{}, gens: map[string]int64{}, jobs: map[string]bool{},
		flagged: map[string]edgeFlags{}}
	maps.Copy(w.names, spec.startNames)
	if st != nil {
		w.reached, w.nodes, w.edges = unpack(st.Reached), unpack(st.Nodes), unpack(st.Edges)
	}
	return w
}

func reachKey(down bool, key string) string {
	if down {
		return "d|" + key
	}
	return "u|" + key
}

// run expands frontier hop by hop until it is exhausted or a budget stops the page. The walk is strictly level
// by level per direction, across pages too: a hop expands only the entries of the lowest depth of each direction
// (a cursor may carry the rest of level d next to level d+1 entries), and a direction whose level left fan-out
// continuations goes no deeper on this page. So a node is always reached first at its shortest depth, and
// marking it reached then (never expanding it again) loses nothing.
func (w *walk) run(ctx context.Context, frontier []Entry) error {
	if w.spec.firstPage {
		for _, n := range w.spec.startNodes {
			w.addNode(n)
		}
		for _, e := range frontier {
			w.reached.add(reachKey(e.Down, e.Key))
		}
	}
	for hops := 0; ; hops++ {
		frontier = w.expandable(frontier)
		if len(frontier) == 0 {
			return nil
		}
		if hops == w.spec.maxHops {
			return w.stop(frontier, api.StopDepthCap, "depth cap of "+itoa(w.spec.maxHops)+" hops per page")
		}
		if hops > 0 && !w.spec.clock().Before(w.spec.deadline) {
			return w.stop(frontier, api.StopDeadline, "deadline")
		}
		level, later := lowestLevel(frontier)
		next, err := w.hop(ctx, level)
		if err != nil {
			return err
		}
		if w.pending != nil {
			w.pending = append(w.pending, later...)
			return nil
		}
		frontier = w.hold(append(next, later...))
	}
}

// lowestLevel splits a frontier (sorted) into the entries at the lowest depth of their direction, which the next
// hop expands, and the deeper ones, which wait for that level to be finished.
func lowestLevel(frontier []Entry) (level, later []Entry) {
	low := map[bool]int{}
	for _, e := range frontier {
		if d, ok := low[e.Down]; !ok || e.Depth < d {
			low[e.Down] = e.Depth
		}
	}
	for _, e := range frontier {
		if e.Depth == low[e.Down] {
			level = append(level, e)
		} else {
			later = append(later, e)
		}
	}
	return level, later
}

// hold sets aside (w.held, carried in the cursor) the entries of every direction with fan-out continuations waiting:
// that direction's level is not finished, so nothing deeper may be expanded before the next page finishes it.
// It returns the entries that may still be expanded on this page.
func (w *walk) hold(frontier []Entry) []Entry {
	if len(w.deferred) == 0 || w.spec.oneShot {
		return frontier
	}
	blocked := map[bool]bool{}
	for _, e := range w.deferred {
		blocked[e.Down] = true
	}
	out := frontier[:0:0]
	for _, e := range frontier {
		if blocked[e.Down] {
			w.held = append(w.held, e)
		} else {
			out = append(out, e)
		}
	}
	return out
}

func (w *walk) stop(frontier []Entry, reason api.StopReason, words string) error {
	w.pending = append(w.pending, frontier...)
	w.stops.add(reason, words)
	return nil
}

// expandable keeps the entries still below the requested depth, in deterministic order.
func (w *walk) expandable(frontier []Entry) []Entry {
	out := make([]Entry, 0, len(frontier))
	for _, e := range frontier {
		if e.Depth < w.spec.depth {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, Entry.less)
	return slices.CompactFunc(out, func(a, b Entry) bool { return a.sortKey() == b.sortKey() })
}

// hop reads the whole frontier (one read per kind and direction), checks the hop with the policy once (what
// it leaves, what it reaches), keeps what the caller may see, then takes each entry's neighbours in order within
// the fan-out and node budgets. Hidden neighbours never count against a budget nor a fan-out marker.
func (w *walk) hop(ctx context.Context, frontier []Entry) ([]Entry, error) {
	raw, err := w.read(ctx, frontier, readMode{limited: true})
	if err != nil {
		return nil, err
	}
	checked, err := w.authorize(ctx, frontier, raw)
	if err != nil {
		return nil, err
	}
	found := w.sift(raw, checked)
	if err := w.complete(ctx, frontier, raw, found); err != nil {
		return nil, err
	}
	var next []Entry
	for i, e := range frontier {
		nb := found.neighbours[e.sortKey()]
		if !w.fits(e, nb) {
			w.pending = append(append(w.pending, frontier[i:]...), next...)
			w.stops.add(api.StopNodeBudget, "node budget of "+itoa(w.spec.maxNodes)+" per page")
			return nil, nil
		}
		next = append(next, w.take(e, nb)...)
		if found.hidden[e.sortKey()] && e.Skip == 0 {
			w.placeholder(e)
		}
	}
	return next, nil
}

// placeholder adds the REDACT placeholder standing for every hidden neighbour of e in its direction.
func (w *walk) placeholder(e Entry) {
	if !w.redact {
		return
	}
	of := publicID(Node{e.Kind, e.Key})
	dir := DirOf(e.Down)
	id := w.gate.Redactor().PlaceholderID(w.spec.principal, of, string(dir))
	if w.nodes.has(id) {
		return
	}
	w.nodes.add(id)
	w.restricted = append(w.restricted, &api.RestrictedNode{ID: id, NeighbourOf: of, Direction: dir})
}

// neighbour is one allowed neighbour of a frontier entry with the edges to it.
type neighbour struct {
	node  Node
	edges []*api.LineageEdge
	name  graph.NameRef
}

// window is the part of an entry's neighbours this page takes (after Skip, within the fan-out budget).
func (w *walk) window(e Entry, nb []neighbour) (taken []neighbour, more bool) {
	if e.Skip >= len(nb) {
		return nil, false
	}
	nb = nb[e.Skip:]
	if len(nb) > w.spec.fanOut {
		return nb[:w.spec.fanOut], true
	}
	return nb, false
}

// fits reports whether the entry's new nodes fit in the page's node budget. An entry always fits on a page that
// returned nothing yet, so every page makes progress.
func (w *walk) fits(e Entry, nb []neighbour) bool {
	taken, _ := w.window(e, nb)
	n := 0
	for _, x := range taken {
		if !w.nodes.has(x.node.Key) {
			n++
		}
	}
	return len(w.newNodes) == 0 || len(w.newNodes)+n <= w.spec.maxNodes
}

// take returns the entry's neighbours within budget and the next frontier entries they make.
func (w *walk) take(e Entry, nb []neighbour) []Entry {
	taken, more := w.window(e, nb)
	var next []Entry
	for _, x := range taken {
		for _, edge := range x.edges {
			w.addEdge(edge)
		}
		w.addNode(x.node)
		if rk := reachKey(e.Down, x.node.Key); !w.reached.has(rk) {
			w.reached.add(rk)
			next = append(next, Entry{Key: x.node.Key, Kind: x.node.Kind, Down: e.Down, Depth: e.Depth + 1})
		}
	}
	if more {
		shown := e.Skip + len(taken)
		w.markers = append(w.markers, api.FanOutMarker{Node: publicID(Node{e.Kind, e.Key}), Direction: DirOf(e.Down), Shown: shown})
		w.deferred = append(w.deferred, Entry{Key: e.Key, Kind: e.Kind, Down: e.Down, Depth: e.Depth, Skip: shown})
		w.stops.add(api.StopFanOut, "fan-out budget of "+itoa(w.spec.fanOut)+" per node")
	}
	return next
}

func (w *walk) addNode(n Node) {
	if w.nodes.has(n.Key) {
		return
	}
	w.nodes.add(n.Key)
	w.newNodes = append(w.newNodes, n)
}

func (w *walk) addEdge(e *api.LineageEdge) {
	if w.edges.has(e.ID) {
		return
	}
	w.edges.add(e.ID)
	w.newEdges = append(w.newEdges, e)
	w.edgeGaps(e)
	if e.JobKey != "" {
		w.jobs[e.JobKey] = true
	}
}

// DirOf is the direction of a walk downstream (down) or upstream.
func DirOf(down bool) api.Direction {
	if down {
		return api.Downstream
	}
	return api.Upstream
}

func publicID(n Node) string {
	switch n.Kind {
	case HopField:
		return api.FieldID(n.Key)
	case HopJob:
		return api.JobID(n.Key)
	}
	return api.DatasetID(n.Key)
}
