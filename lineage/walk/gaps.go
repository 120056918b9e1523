package walk

import (
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/api"
)

// gapSet collects an answer's gaps once each, in the order found.
type gapSet struct {
	list []api.Gap
	seen map[string]bool
}

func (g *gapSet) add(gap api.Gap) {
	k := string(gap.Kind) + "|" + strings.Join(gap.Nodes, ",") + "|" + strings.Join(gap.Edges, ",")
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	if g.seen[k] {
		return
	}
	g.seen[k] = true
	if gap.Nodes == nil {
		gap.Nodes = []string{}
	}
	if gap.Edges == nil {
		gap.Edges = []string{}
	}
	g.list = append(g.list, gap)
}

func (g *gapSet) all() []api.Gap {
	if g.list == nil {
		return []api.Gap{}
	}
	return g.list
}

// edgeGaps records the gaps an edge carries when it is returned.
func (w *walk) edgeGaps(e *api.LineageEdge) {
	f := w.flagged[e.ID]
	nodes, edges := []string{e.From, e.To}, []string{e.ID}
	if f.declaredOnly {
		w.gaps.add(api.Gap{Kind: api.GapDeclaredOnly, Nodes: nodes, Edges: edges,
			Message: "declared only: no run has reported this edge"})
	}
	if f.stale {
		w.gaps.add(api.Gap{Kind: api.GapStaleEdge, Nodes: nodes, Edges: edges,
			Message: fmt.Sprintf("stale: last observed %s, older than the job's staleness threshold", e.LastObservedAt.Format("2006-01-02T15:04:05Z"))})
	}
	if f.runWithoutTerminal {
		w.gaps.add(api.Gap{Kind: api.GapRunWithoutTerminal, Nodes: nodes, Edges: edges,
			Message: "the latest run evidencing this edge has no terminal event yet"})
	}
}

// noColumnLineage records fields whose dataset has dataset-level lineage this way but no column lineage.
func (w *walk) noColumnLineage(fieldKeys []string, down bool) {
	for _, k := range fieldKeys {
		w.gaps.add(api.Gap{Kind: api.GapNoColumnLineage, Nodes: []string{api.FieldID(k)},
			Message: fmt.Sprintf("no column lineage %s of this field although its dataset has %s lineage",
				strings.ToLower(string(DirOf(down))), strings.ToLower(string(DirOf(down))))})
	}
}

// truncatedGap describes why the page stopped and which nodes wait for the cursor.
func (w *walk) truncatedGap(waiting []Entry) { w.gaps.add(w.truncatedGapOf(waiting)) }

// truncatedGapOf is the TRUNCATED gap of a page: why it stopped and which nodes wait for the cursor.
func (w *walk) truncatedGapOf(waiting []Entry) api.Gap {
	var ids []string
	seen := map[string]bool{}
	for _, e := range waiting {
		id := publicID(Node{e.Kind, e.Key})
		if !seen[id] && len(ids) < maxGapNodes {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return api.Gap{Kind: api.GapTruncated, Nodes: ids, StopReasons: w.stops.reasons(),
		Message: "truncated by the " + strings.Join(dedupe(w.stops.words), ", ") + "; continue with the cursor"}
}

// stops are the budgets that stopped a page, typed for decisions (caching, Gap.stopReasons) and in words for
// the TRUNCATED gap's message.
type stops struct {
	list  []api.StopReason
	words []string
}

func (s *stops) add(r api.StopReason, words string) {
	s.list = append(s.list, r)
	s.words = append(s.words, words)
}

// reasons are the distinct reasons in the order first reached (nil when nothing stopped the page).
func (s stops) reasons() []api.StopReason { return dedupe(s.list) }

func dedupe[T comparable](s []T) []T {
	var out []T
	seen := map[T]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
