package resolvers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/lineage/lineagetest"
)

// Shape of the layered fixture: the root feeds every node of level 1 (a fan-out wider than small page budgets);
// every node of level i feeds its twin on level i+1 and its neighbour on its own level (a ring), so a node of
// level i is also reachable at depth i+1 through a sibling. A walk that expands a node at the first depth it
// sees it instead of its shortest one (a later page mixing levels) loses that node's edges at the last depth.
const (
	layerWidth  = 5
	layerLevels = 3
	layerField  = "c"
)

// layered writes the fixture under prefix and returns the root's name. Downstream it flows root -> level 1 ->
// ... ; upstream (down false) every flow is reversed, so an UPSTREAM walk from the root sees the same shape.
// Each dataset has one field layerField, fed along every dataset edge (same job).
func layered(fx *lineagetest.Fixture, prefix string, down bool) string {
	fields := map[string]string{}
	add := func(name string) string {
		key := fx.Dataset(name)
		fields[key] = fx.Field(key, layerField, fx.T0, time.Time{})
		return key
	}
	level := make([][]string, layerLevels+1)
	root := prefix + "root"
	level[0] = []string{add(root)}
	for i := 1; i <= layerLevels; i++ {
		for j := range layerWidth {
			level[i] = append(level[i], add(fmt.Sprintf("%s%d_%d", prefix, i, j)))
		}
	}
	flow := func(job string, from string, to []string) {
		j := fx.Job(job)
		for _, t := range to {
			if down {
				fx.Flow(j, []string{from}, []string{t})
				fx.ColumnFeeds(fields[from], fields[t], j)
			} else {
				fx.Flow(j, []string{t}, []string{from})
				fx.ColumnFeeds(fields[t], fields[from], j)
			}
		}
	}
	flow(prefix+"j_root", level[0][0], level[1])
	for i := 1; i <= layerLevels; i++ {
		for j, n := range level[i] {
			to := []string{level[i][(j+1)%layerWidth]}
			if i < layerLevels {
				to = append(to, level[i+1][j])
			}
			flow(fmt.Sprintf("%sj%d_%d", prefix, i, j), n, to)
		}
	}
	return root
}

// budgetCases records which budgets the paged answers actually ran into.
type budgetCases struct{ fanOut, nodeOnly, paged int }

// TestPagesFollowLevelsAcrossFanOutAndNodeBudgets pages the layered fixture with small budgets (maxNodes 3..5:
// the fan-out budget min(FanOut, maxNodes-1) splits the root's level over pages; 6..9: only the node budget stops
// pages, mid-level) and requires the union of the pages to be the unlimited single-page answer, for both
// directions and both granularities.
func TestPagesFollowLevelsAcrossFanOutAndNodeBudgets(t *testing.T) {
	h := newHarness(t)
	roots := map[string]string{"DOWNSTREAM": layered(h.fx, "d", true), "UPSTREAM": layered(h.fx, "u", false)}
	var seen budgetCases
	for _, dir := range []string{"DOWNSTREAM", "UPSTREAM"} {
		for _, gran := range []string{"DATASET", "FIELD"} {
			start := dsStart(h.fx.NS, roots[dir])
			if gran == "FIELD" {
				start = fieldStart(h.fx.NS, roots[dir], layerField)
			}
			for depth := 2; depth <= layerLevels+1; depth++ {
				wantNodes, wantEdges := h.unlimited(start, dir, gran, depth)
				if n := 1 + layerWidth*min(depth, layerLevels); len(wantNodes) != n {
					t.Fatalf("%s %s depth %d: full answer has %d nodes %v, want %d", dir, gran, depth, len(wantNodes), wantNodes, n)
				}
				for _, maxNodes := range []int{3, 4, 5, 6, 7, 9} {
					pages := h.paged(map[string]any{"start": start, "dir": dir, "gran": gran, "depth": depth, "max": maxNodes})
					seen.note(pages)
					nodes, edges := union(t, pages)
					if !eq(nodes, wantNodes) || !eq(edges, wantEdges) {
						t.Fatalf("%s %s depth %d maxNodes %d: %d pages give\n nodes %v\n edges %v\nfull answer\n nodes %v\n edges %v",
							dir, gran, depth, maxNodes, len(pages), nodes, edges, wantNodes, wantEdges)
					}
				}
			}
		}
	}
	if seen.fanOut == 0 || seen.nodeOnly == 0 {
		t.Fatalf("the fixture did not exercise both budgets: %+v", seen)
	}
}

// unlimited is the single-page answer with budgets out of the way.
func (h *harness) unlimited(start map[string]any, dir, gran string, depth int) (nodes, edges []string) {
	h.t.Helper()
	g := h.lineage(map[string]any{"start": start, "dir": dir, "gran": gran, "depth": depth, "max": 5000})
	if g.Truncated || len(g.FanOutMarkers) > 0 {
		h.t.Fatalf("unlimited answer truncated: %+v", g.Gaps)
	}
	return union(h.t, []lineageGraph{g})
}

func (c *budgetCases) note(pages []lineageGraph) {
	if len(pages) < 2 {
		return
	}
	c.paged++
	markers := 0
	nodeBudget := false
	for _, p := range pages {
		markers += len(p.FanOutMarkers)
		for _, g := range p.gapsOf("TRUNCATED") {
			nodeBudget = nodeBudget || strings.Contains(g.Message, "node budget")
		}
	}
	switch {
	case markers > 0:
		c.fanOut++
	case nodeBudget:
		c.nodeOnly++
	}
}
