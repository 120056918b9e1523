package walk

import (
	"context"
	"slices"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// memReader is an in-memory NeighborReader over a dataset graph without jobs: each edge is one observed
// relationship valid forever. It answers dataset hops as the Neo4j reader does: neighbours in key order, Limit
// distinct neighbours per frontier node, names-only rows, and reads restricted to listed neighbours. advance, when
// set, is called once per read (a test clock that moves while the walk reads).
type memReader struct {
	down    map[string][]string // dataset -> downstream datasets
	up      map[string][]string // dataset -> upstream datasets
	reads   int
	advance func()
}

var _ NeighborReader = (*memReader)(nil)

// newMemReader builds the graph from edges "from>to".
func newMemReader(edges ...string) *memReader {
	r := &memReader{down: map[string][]string{}, up: map[string][]string{}}
	for _, e := range edges {
		i := slices.Index([]byte(e), '>')
		from, to := e[:i], e[i+1:]
		r.down[from] = append(r.down[from], to)
		r.up[to] = append(r.up[to], from)
	}
	for _, m := range []map[string][]string{r.down, r.up} {
		for k := range m {
			slices.Sort(m[k])
		}
	}
	return r
}

func (r *memReader) Neighbors(_ context.Context, req HopRequest) (HopResult, error) {
	r.reads++
	if r.advance != nil {
		r.advance()
	}
	adj := r.up
	if req.Down {
		adj = r.down
	}
	var out HopResult
	for _, src := range req.Keys {
		nb := adj[src]
		if req.Only != nil {
			nb = slices.DeleteFunc(slices.Clone(nb), func(d string) bool { return !slices.Contains(req.Only[src], d) })
		}
		if req.Limit > 0 && len(nb) > req.Limit {
			nb = nb[:req.Limit]
		}
		for _, dst := range nb {
			out.Rows = append(out.Rows, memRow(src, dst, req.Names))
		}
	}
	return out, nil
}

// memRow is the row of one relationship: observed, published, valid forever, last observed at the epoch's start
// of the test (never stale for a walk at testAsOf).
func memRow(src, dst string, namesOnly bool) graph.HopRow {
	row := graph.HopRow{Src: src, Dst: dst, DstName: graph.NameRef{Namespace: "ns", Name: dst},
		DstCurrent: graph.NameRef{Namespace: "ns", Name: dst}}
	if !namesOnly {
		row.Out = &graph.Rel{Kind: graph.KindObserved, Froms: []int64{0}, Tos: []int64{graph.OpenEnd},
			Pubs: []string{graph.PubPublished}, LastObservedAt: testAsOf}
	}
	return row
}

// testAsOf is the instant the in-memory walks are about.
var testAsOf = graph.Millis(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
