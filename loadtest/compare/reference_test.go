package compare_test

import (
	"context"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/compare"
)

// rel is one stored lineage relationship of the fixture, read back as is.
type rel struct {
	typ, from, to string // INPUT_TO: dataset -> job; OUTPUT_TO: job -> dataset; DECLARED_FEEDS: dataset -> dataset
	froms, tos    []int64
	pubs          []string
}

func (r rel) inForce(t int64) bool {
	for i := range r.froms {
		if r.froms[i] <= t && t < r.tos[i] && r.pubs[i] == graph.PubPublished {
			return true
		}
	}
	return false
}

// reference is a third implementation of the walk, in plain Go over every relationship of the fixture:
// breadth first, each dataset expanded once at its shortest distance, every edge out of a dataset closer
// than the depth returned. The naive query and Headwater must both equal it.
type reference struct {
	rels []rel
}

func readReference(ctx context.Context, t *testing.T, s *graph.Store, prefix string) reference {
	t.Helper()
	res, err := neo4j.ExecuteQuery(ctx, s.Driver, `MATCH (a:Dataset)-[r:INPUT_TO|DECLARED_FEEDS]->(b)
WHERE a.namespace CONTAINS $p
RETURN type(r) AS typ, a.key AS from, b.key AS to, r.froms AS froms, r.tos AS tos, r.pubs AS pubs
UNION ALL
MATCH (j:Job)-[r:OUTPUT_TO]->(d:Dataset) WHERE d.namespace CONTAINS $p
RETURN type(r) AS typ, j.key AS from, d.key AS to, r.froms AS froms, r.tos AS tos, r.pubs AS pubs`,
		map[string]any{"p": "://" + prefix + "-"}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		t.Fatalf("read reference: %v", err)
	}
	ref := reference{}
	for _, r := range res.Records {
		p := graph.Props(r.AsMap())
		ref.rels = append(ref.rels, rel{typ: p.Str("typ"), from: p.Str("from"), to: p.Str("to"), froms: p.Ints("froms"),
			tos: p.Ints("tos"), pubs: p.Strs("pubs")})
	}
	if len(ref.rels) == 0 {
		t.Fatal("reference: no relationships under the prefix")
	}
	return ref
}

// step is a dataset-to-dataset step from near to far (walk direction) through job ("" for declared).
type step struct{ far, job string }

// adjacency lists the steps in force at t (all == false: ignore time and publication) in one direction.
func (ref reference) adjacency(t int64, down, all bool) map[string][]step {
	ins, outs := map[string][]string{}, map[string][]string{} // job -> datasets
	adj := map[string][]step{}
	for _, r := range ref.rels {
		if !all && !r.inForce(t) {
			continue
		}
		switch r.typ {
		case graph.RelInputTo:
			ins[r.to] = append(ins[r.to], r.from)
		case graph.RelOutputTo:
			outs[r.from] = append(outs[r.from], r.to)
		case graph.RelDeclaredFeeds:
			if down {
				adj[r.from] = append(adj[r.from], step{far: r.to})
			} else {
				adj[r.to] = append(adj[r.to], step{far: r.from})
			}
		}
	}
	for job, in := range ins {
		for _, i := range in {
			for _, o := range outs[job] {
				if down {
					adj[i] = append(adj[i], step{far: o, job: job})
				} else {
					adj[o] = append(adj[o], step{far: i, job: job})
				}
			}
		}
	}
	return adj
}

// walk returns the answer and the largest distance reached.
func (ref reference) walk(rootKey string, t int64, down bool, depth int, all bool) (compare.Answer, int) {
	adj := ref.adjacency(t, down, all)
	a := compare.NewAnswer()
	a.Nodes[rootKey] = true
	frontier, far := []string{rootKey}, 0
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []string
		for _, u := range frontier {
			for _, s := range adj[u] {
				e := compare.Edge{From: u, To: s.far, Job: s.job}
				if !down {
					e = compare.Edge{From: s.far, To: u, Job: s.job}
				}
				a.Edges[e] = true
				if !a.Nodes[s.far] {
					a.Nodes[s.far] = true
					next = append(next, s.far)
					far = d + 1
				}
			}
		}
		frontier = next
	}
	return a, far
}
