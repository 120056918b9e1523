package lineage

import (
	"fmt"
	"strings"
)

// gapSet collects an answer's gaps once each, in the order found.
type gapSet struct {
	list []Gap
	seen map[string]bool
}

func (g *gapSet) add(gap Gap) {
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

func (g *gapSet) all() []Gap {
	if g.list == nil {
		return []Gap{}
	}
	return g.list
}

// edgeGaps records the gaps an edge carries when it is returned.
func (w *walk) edgeGaps(e *LineageEdge) {
	f := w.flagged[e.ID]
	nodes, edges := []string{e.From, e.To}, []string{e.ID}
	if f.declaredOnly {
		w.gaps.add(Gap{Kind: GapDeclaredOnly, Nodes: nodes, Edges: edges,
			Message: "declared only: no run has reported this edge"})
	}
	if f.stale {
		w.gaps.add(Gap{Kind: GapStaleEdge, Nodes: nodes, Edges: edges,
			Message: fmt.Sprintf("stale: last observed %s, older than the job's staleness threshold", e.LastObservedAt.Format("2006-01-02T15:04:05Z"))})
	}
	if f.runWithoutTerminal {
		w.gaps.add(Gap{Kind: GapRunWithoutTerminal, Nodes: nodes, Edges: edges,
			Message: "the latest run evidencing this edge has no terminal event yet"})
	}
}

// noColumnLineage records fields whose dataset has dataset-level lineage this way but no column lineage.
func (w *walk) noColumnLineage(fieldKeys []string, down bool) {
	for _, k := range fieldKeys {
		w.gaps.add(Gap{Kind: GapNoColumnLineage, Nodes: []string{FieldID(k)},
			Message: fmt.Sprintf("no column lineage %s of this field although its dataset has %s lineage",
				strings.ToLower(string(dirOf(down))), strings.ToLower(string(dirOf(down))))})
	}
}

// truncatedGap describes why the page stopped and which nodes wait for the cursor.
func (w *walk) truncatedGap(waiting []frontierEntry) {
	var ids []string
	seen := map[string]bool{}
	for _, e := range waiting {
		id := publicID(nodeRef{e.Kind, e.Key})
		if !seen[id] && len(ids) < maxGapNodes {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	reasons := dedupe(w.reasons)
	w.gaps.add(Gap{Kind: GapTruncated, Nodes: ids,
		Message: "truncated by the " + strings.Join(reasons, ", ") + "; continue with the cursor"})
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
