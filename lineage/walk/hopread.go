package walk

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/ordered"
)

// hopFound is what one hop found and may show: per frontier entry (by sort key) its visible neighbours in
// deterministic order, and the entries that had hidden neighbours (REDACT placeholders).
type hopFound struct {
	neighbours map[string][]neighbour
	flags      map[string]edgeFlags
	hidden     map[string]bool
}

type groupKey struct {
	kind HopKind
	down bool
}

// hopRows are the raw (unfiltered) rows of one batched read; they never leave the hop.
type hopRows struct {
	g     groupKey
	limit int // the neighbour limit of the read (0: every neighbour)
	rows  []graph.HopRow
	far   map[string][]graph.NameRef // field hops: far side of each frontier field's dataset-level lineage
}

// readMode is what a hop read asks for.
type readMode struct {
	limited bool                // dataset hops: only the neighbours this page can take
	names   bool                // dataset hops: every neighbour's key and identities only
	only    map[string][]string // dataset hops: full rows of these neighbours only, per entry sort key
}

// read issues one batched read per (kind, direction) present in the frontier: one for a one-way walk. With
// limited, a dataset read asks for only as many neighbours per node as this page can take (the furthest fan-out
// window plus one, to know whether there are more), so a hub's thousand neighbours are not all projected to
// show two hundred; complete reads the rest where the window may have missed something.
func (w *walk) read(ctx context.Context, frontier []Entry, m readMode) ([]hopRows, error) {
	groups := map[groupKey][]string{}
	skip := map[groupKey]int{}
	only := map[groupKey]map[string][]string{}
	var order []groupKey
	for _, e := range frontier {
		g := groupKey{e.Kind, e.Down}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
			only[g] = map[string][]string{}
		}
		groups[g] = append(groups[g], e.Key)
		skip[g] = max(skip[g], e.Skip)
		if m.only != nil {
			only[g][e.Key] = m.only[e.sortKey()]
		}
	}
	out := make([]hopRows, 0, len(order))
	for _, g := range order {
		req := HopRequest{Kind: g.kind, Keys: groups[g], Down: g.down, AsOf: w.spec.asOf, AsOfKey: w.spec.asOfKey,
			Pubs: w.spec.pubs, Names: m.names}
		if m.limited && g.kind == HopDataset {
			req.Limit = skip[g] + w.spec.fanOut + 1
		}
		if m.only != nil {
			req.Only = only[g]
		}
		res, err := w.reader.Neighbors(ctx, req)
		if err != nil {
			return nil, api.Unavailable(err)
		}
		maps.Copy(w.gens, res.Gens)
		out = append(out, hopRows{g: g, limit: req.Limit, rows: res.Rows, far: res.Far})
	}
	return out, nil
}

// fullReads returns the sort keys of the entries whose limited read reached its limit: they may have more
// neighbours than were read.
func fullReads(raw []hopRows) map[string]bool {
	full := map[string]bool{}
	for _, hr := range raw {
		if hr.limit == 0 {
			continue
		}
		dsts := map[string]map[string]bool{}
		for _, r := range hr.rows {
			if dsts[r.Src] == nil {
				dsts[r.Src] = map[string]bool{}
			}
			dsts[r.Src][r.Dst] = true
		}
		for src, d := range dsts {
			if len(d) >= hr.limit {
				full[Entry{Key: src, Kind: hr.g.kind, Down: hr.g.down}.sortKey()] = true
			}
		}
	}
	return full
}

// complete finishes what a limited read may have left out, for the entries whose read reached its limit: an
// entry whose visible neighbours fell short of its fan-out window (hidden ones took places in it), and, in REDACT
// mode, an entry expanded for the first time (Skip 0) whose read showed no hidden neighbour (one may lie beyond
// the window). It reads those entries' neighbours names only, checks them, records whether any is hidden, and
// reads in full only the visible neighbours of the short entries: hidden neighbours are never projected.
func (w *walk) complete(ctx context.Context, frontier []Entry, raw []hopRows, found hopFound) error {
	full := fullReads(raw)
	var need, short []Entry
	for _, e := range frontier {
		sk := e.sortKey()
		if !full[sk] {
			continue
		}
		isShort := len(found.neighbours[sk]) < e.Skip+w.spec.fanOut+1
		if isShort || (w.redact && e.Skip == 0 && !e.Probed && !found.hidden[sk]) {
			need = append(need, e)
		}
		if isShort {
			short = append(short, e)
		}
	}
	if len(need) == 0 {
		return nil
	}
	visible, err := w.scanNames(ctx, need, found)
	if err != nil || len(short) == 0 {
		return err
	}
	only := map[string][]string{}
	for _, e := range short {
		only[e.sortKey()] = visible[e.sortKey()]
	}
	return w.readOnly(ctx, short, only, found)
}

// probeWaiting gives the nodes this page returned but did not expand their REDACT placeholders now, on the
// page that returns them (not on the later page that expands them): it looks for hidden neighbours of every
// waiting entry not yet looked at, in one names-only read per kind and direction, and marks the entries Probed.
func (w *walk) probeWaiting(ctx context.Context) error {
	if !w.redact || w.spec.oneShot {
		return nil
	}
	var todo []Entry
	mark := func(list []Entry) {
		for i := range list {
			if e := &list[i]; e.Skip == 0 && !e.Probed && e.Depth < w.spec.depth {
				todo = append(todo, *e)
				e.Probed = true
			}
		}
	}
	mark(w.pending)
	mark(w.held)
	if len(todo) == 0 {
		return nil
	}
	slices.SortFunc(todo, Entry.less)
	todo = slices.CompactFunc(todo, func(a, b Entry) bool { return a.sortKey() == b.sortKey() })
	found := hopFound{hidden: map[string]bool{}}
	if _, err := w.scanNames(ctx, todo, found); err != nil {
		return err
	}
	for _, e := range todo {
		if found.hidden[e.sortKey()] {
			w.placeholder(e)
		}
	}
	return nil
}

// scanNames reads the entries' neighbours names only, marks the entries with a hidden neighbour, and returns
// each entry's visible neighbours in key order.
func (w *walk) scanNames(ctx context.Context, entries []Entry, found hopFound) (map[string][]string, error) {
	raw, err := w.read(ctx, entries, readMode{names: true})
	if err != nil {
		return nil, err
	}
	checked, err := w.authorize(ctx, entries, raw)
	if err != nil {
		return nil, err
	}
	visible := map[string][]string{}
	for _, hr := range raw {
		for _, r := range hr.rows {
			sk := Entry{Key: r.Src, Kind: hr.g.kind, Down: hr.g.down}.sortKey()
			if !checked.OK(leaveID(sk)) {
				continue
			}
			if checked.OK(nodeID(r.Dst)) {
				visible[sk] = append(visible[sk], r.Dst)
			} else {
				found.hidden[sk] = true
			}
		}
	}
	return visible, nil
}

// readOnly reads the short entries' visible neighbours in full and replaces what the hop found for them.
func (w *walk) readOnly(ctx context.Context, short []Entry, only map[string][]string, found hopFound) error {
	raw, err := w.read(ctx, short, readMode{only: only})
	if err != nil {
		return err
	}
	checked, err := w.authorize(ctx, short, raw)
	if err != nil {
		return err
	}
	again := w.sift(raw, checked)
	for _, e := range short {
		sk := e.sortKey()
		found.neighbours[sk] = again.neighbours[sk]
		found.hidden[sk] = found.hidden[sk] || again.hidden[sk]
	}
	maps.Copy(found.flags, again.flags)
	return nil
}

// Ids of the checks of one hop.
func leaveID(sk string) string     { return "leave|" + sk }
func nodeID(key string) string     { return "node|" + key }
func jobCheckID(key string) string { return "job|" + key }
func farID(n graph.NameRef) string { return "far|" + n.Namespace + "\x00" + n.Name }

// authorize asks the policy once for the whole hop: VIEW_LINEAGE on every frontier node (the nodes the hop
// leaves), DESCRIBE on every neighbour reached and every job between (each under its current and its asOf
// identity), and DESCRIBE on the far-side datasets behind NO_COLUMN_LINEAGE facts.
func (w *walk) authorize(ctx context.Context, frontier []Entry, raw []hopRows) (*batch, error) {
	b := newBatch()
	for _, e := range frontier {
		b.Add(leaveID(e.sortKey()), authz.PrivViewLineage, candidates(AuthzKind(e.Kind), e.Key, w.names[e.Key])...)
	}
	for _, hr := range raw {
		kind := authz.KindDataset
		if hr.g.kind == HopField {
			kind = authz.KindField
		}
		for _, r := range hr.rows {
			b.Add(nodeID(r.Dst), authz.PrivDescribe, candidates(kind, r.Dst, Names{Current: r.DstCurrent, AsOf: r.DstName})...)
			if r.Job != nil {
				b.Add(jobCheckID(r.Job.Key), authz.PrivDescribe,
					authz.Candidate{Kind: authz.KindJob, Key: r.Job.Key, Namespace: r.Job.Namespace, Name: r.Job.Name})
			}
		}
		for _, far := range hr.far {
			for _, n := range far {
				b.Add(farID(n), authz.PrivDescribe, authz.Candidate{Kind: authz.KindDataset, Namespace: n.Namespace, Name: n.Name})
			}
		}
	}
	return b, b.Run(ctx, w.gate, w.spec.principal)
}

// pairKey identifies the edge a row belongs to.
type pairKey struct{ src, dst, job string }

// hiddenJob stands for every job the caller may not describe between two nodes: their paths make one edge
// with job null, so neither the jobs' ids nor their number show.
const hiddenJob = "~"

// sift keeps what the caller may see: rows of frontier nodes it may leave, to neighbours it may describe; a
// hidden job becomes hiddenJob. Entries with hidden neighbours are remembered for REDACT placeholders.
func (w *walk) sift(raw []hopRows, b *batch) hopFound {
	found := hopFound{neighbours: map[string][]neighbour{}, flags: map[string]edgeFlags{}, hidden: map[string]bool{}}
	for _, hr := range raw {
		var kept []graph.HopRow
		withRows := map[string]bool{}
		for _, r := range hr.rows {
			sk := Entry{Key: r.Src, Kind: hr.g.kind, Down: hr.g.down}.sortKey()
			switch {
			case !b.OK(leaveID(sk)):
				continue
			case !b.OK(nodeID(r.Dst)):
				found.hidden[sk] = true
				continue
			}
			if r.Job != nil && !b.OK(jobCheckID(r.Job.Key)) {
				r.Job = &graph.JobBrief{Key: hiddenJob}
			}
			w.names[r.Dst] = Names{Current: r.DstCurrent, AsOf: r.DstName}
			kept = append(kept, r)
			withRows[r.Src] = true
		}
		w.collect(found, hr.g, kept)
		w.noColumnLineage(visibleNoCol(hr, b, withRows, func(k string) bool {
			return b.OK(leaveID(Entry{Key: k, Kind: hr.g.kind, Down: hr.g.down}.sortKey()))
		}), hr.g.down)
	}
	for sk := range found.neighbours {
		w.attachFlags(found, sk)
	}
	return found
}

// visibleNoCol is the NO_COLUMN_LINEAGE gap computed from what the caller may see: the frontier fields it may
// leave that have no column edge it may see this way (withRows) while their dataset has dataset-level lineage this
// way with at least one dataset it may see. Column edges to hidden fields count as none (their presence must not
// remove the gap), and lineage with hidden datasets only gives no gap (it would reveal hidden lineage).
func visibleNoCol(hr hopRows, b *batch, withRows map[string]bool, leave func(string) bool) []string {
	var out []string
	for _, k := range ordered.Keys(hr.far) {
		if withRows[k] || !leave(k) {
			continue
		}
		if slices.ContainsFunc(hr.far[k], func(n graph.NameRef) bool { return b.OK(farID(n)) }) {
			out = append(out, k)
		}
	}
	return out
}

// collect groups rows into edges and edges into neighbours of each frontier entry.
func (w *walk) collect(found hopFound, g groupKey, rows []graph.HopRow) {
	pairs := map[pairKey][]pair{}
	rowOf := map[pairKey]graph.HopRow{}
	var keys []pairKey
	for _, r := range rows {
		k := pairKey{r.Src, r.Dst, ""}
		if r.Job != nil {
			k.job = r.Job.Key
		}
		if _, ok := pairs[k]; !ok {
			keys = append(keys, k)
			rowOf[k] = r
		}
		pairs[k] = append(pairs[k], pair{in: r.In, out: r.Out})
	}
	slices.SortFunc(keys, func(a, b pairKey) int {
		return strings.Compare(a.src+"\x00"+a.dst+"\x00"+a.job, b.src+"\x00"+b.dst+"\x00"+b.job)
	})
	for _, k := range keys {
		w.addNeighbour(found, g, rowOf[k], pairs[k])
	}
}

func (w *walk) addNeighbour(found hopFound, g groupKey, r graph.HopRow, pairs []pair) {
	src := Node{g.kind, r.Src}
	dst := Node{HopDataset, r.Dst}
	if g.kind == HopField {
		dst.Kind = HopField
	}
	from, to := publicID(src), publicID(dst)
	if !g.down {
		from, to = to, from
	}
	job, hidden := r.Job, r.Job != nil && r.Job.Key == hiddenJob
	if hidden {
		job = nil
	}
	edge, flags := buildEdge(from, to, job, pairs, w.spec.ec)
	if edge == nil || (g.kind == HopField && !w.spec.ec.columns.Keeps(edge.Transformations)) {
		return // not in force, or a column edge the transformation filter does not cross
	}
	if hidden {
		scrubHiddenJob(edge, from, to)
	}
	found.flags[edge.ID] = flags
	sk := Entry{Key: r.Src, Kind: g.kind, Down: g.down}.sortKey()
	list := found.neighbours[sk]
	if n := len(list); n > 0 && list[n-1].node == dst {
		list[n-1].edges = append(list[n-1].edges, edge)
		return
	}
	found.neighbours[sk] = append(list, neighbour{node: dst, edges: []*api.LineageEdge{edge}, name: r.DstName})
}

// scrubHiddenJob gives an edge through jobs the caller may not describe an id without the jobs' keys and removes
// what identifies the jobs' runs from its evidence.
func scrubHiddenJob(e *api.LineageEdge, from, to string) {
	e.ID, e.JobKey = api.EdgeID(from, to, hiddenJob), ""
	for i := range e.Evidence {
		ev := &e.Evidence[i]
		ev.RunID, ev.JobVersion, ev.Producer, ev.EventIDs = nil, nil, nil, []string{}
	}
}

func (w *walk) attachFlags(found hopFound, sk string) {
	for _, n := range found.neighbours[sk] {
		for _, e := range n.edges {
			w.flagged[e.ID] = found.flags[e.ID]
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
