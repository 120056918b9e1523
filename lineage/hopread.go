package lineage

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// hopFound is what one hop found: per frontier entry (by sort key) its neighbours in deterministic order.
type hopFound struct {
	neighbours map[string][]neighbour
	flags      map[string]edgeFlags
}

type groupKey struct {
	kind HopKind
	down bool
}

// read issues one batched read per (kind, direction) present in the frontier: one for a one-way walk.
func (w *walk) read(ctx context.Context, frontier []frontierEntry) (hopFound, error) {
	groups := map[groupKey][]string{}
	var order []groupKey
	for _, e := range frontier {
		g := groupKey{e.Kind, e.Down}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], e.Key)
	}
	found := hopFound{neighbours: map[string][]neighbour{}, flags: map[string]edgeFlags{}}
	for _, g := range order {
		res, err := w.reader.Neighbors(ctx, HopRequest{Kind: g.kind, Keys: groups[g], Down: g.down,
			AsOf: w.spec.asOf, AsOfKey: w.spec.asOfKey, Pubs: w.spec.pubs})
		if err != nil {
			return hopFound{}, unavailable(err)
		}
		for k, v := range res.Gens {
			w.gens[k] = v
		}
		w.noColumnLineage(res.NoColumnLineage, g.down)
		w.collect(found, g, res.Rows)
	}
	return found, nil
}

// pairKey identifies the edge a row belongs to.
type pairKey struct{ src, dst, job string }

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
	src := nodeRef{g.kind, r.Src}
	dst := nodeRef{HopDataset, r.Dst}
	if g.kind == HopField {
		dst.kind = HopField
	}
	from, to := publicID(src), publicID(dst)
	if !g.down {
		from, to = to, from
	}
	edge, flags := buildEdge(from, to, r.Job, pairs, w.spec.ec)
	if edge == nil {
		return
	}
	found.flags[edge.ID] = flags
	sk := frontierEntry{Key: r.Src, Kind: g.kind, Down: g.down}.sortKey()
	list := found.neighbours[sk]
	if n := len(list); n > 0 && list[n-1].node == dst {
		list[n-1].edges = append(list[n-1].edges, edge)
		return
	}
	found.neighbours[sk] = append(list, neighbour{node: dst, edges: []*LineageEdge{edge}, name: r.DstName})
}

// authorize asks the policy once for all candidates of the hop (neighbour nodes and jobs), drops neighbours the
// principal may not see and hides jobs they may not describe (job: null, the hop is not blocked).
func (w *walk) authorize(ctx context.Context, found hopFound) error {
	var cands []authz.Candidate
	seen := map[string]bool{}
	add := func(c authz.Candidate) {
		if !seen[string(c.Kind)+c.Key] {
			seen[string(c.Kind)+c.Key] = true
			cands = append(cands, c)
		}
	}
	for _, sk := range sortedKeys(found.neighbours) {
		for _, n := range found.neighbours[sk] {
			add(candidateOf(n))
			for _, e := range n.edges {
				if e.JobKey != "" {
					add(authz.Candidate{Kind: authz.KindJob, Key: e.JobKey})
				}
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	allowed, err := w.policy.AllowHop(ctx, w.spec.principal, cands)
	if err != nil {
		return err
	}
	ok := map[string]bool{}
	for i, c := range cands {
		ok[string(c.Kind)+c.Key] = i < len(allowed) && allowed[i]
	}
	for sk, list := range found.neighbours {
		found.neighbours[sk] = filterNeighbours(list, ok)
	}
	for sk := range found.neighbours {
		w.attachFlags(found, sk)
	}
	return nil
}

func (w *walk) attachFlags(found hopFound, sk string) {
	for _, n := range found.neighbours[sk] {
		for _, e := range n.edges {
			w.flagged[e.ID] = found.flags[e.ID]
		}
	}
}

func filterNeighbours(list []neighbour, ok map[string]bool) []neighbour {
	out := list[:0]
	for _, n := range list {
		c := candidateOf(n)
		if !ok[string(c.Kind)+c.Key] {
			continue
		}
		for _, e := range n.edges {
			if e.JobKey != "" && !ok[string(authz.KindJob)+e.JobKey] {
				e.JobKey = ""
			}
		}
		out = append(out, n)
	}
	return out
}

func candidateOf(n neighbour) authz.Candidate {
	kind := authz.KindDataset
	if n.node.kind == HopField {
		kind = authz.KindField
	}
	return authz.Candidate{Kind: kind, Key: n.node.key, Namespace: n.name.Namespace, Name: n.name.Name}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func itoa(n int) string { return strconv.Itoa(n) }
