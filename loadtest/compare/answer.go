package compare

import (
	"fmt"
	"slices"
	"strings"
)

// Edge is one dataset-to-dataset lineage edge in data-flow direction, by stable node keys; Job is the job
// key between them ("" for declared dataset-to-dataset lineage).
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Job  string `json:"job,omitempty"`
}

func (e Edge) String() string { return e.From + " -[" + e.Job + "]-> " + e.To }

// Answer is a lineage answer reduced to what both methods must agree on.
type Answer struct {
	Nodes map[string]bool
	Edges map[Edge]bool
}

// NewAnswer returns an empty answer.
func NewAnswer() Answer { return Answer{Nodes: map[string]bool{}, Edges: map[Edge]bool{}} }

// Mismatch describes how two answers differ; the lists are capped at maxListed entries (counts are exact).
type Mismatch struct {
	NodesOnlyHeadwater int      `json:"nodesOnlyHeadwater"`
	NodesOnlyNaive     int      `json:"nodesOnlyNaive"`
	EdgesOnlyHeadwater int      `json:"edgesOnlyHeadwater"`
	EdgesOnlyNaive     int      `json:"edgesOnlyNaive"`
	Examples           []string `json:"examples"`
}

// maxListed bounds the examples kept per mismatch.
const maxListed = 10

// Empty reports whether the answers agreed.
func (m Mismatch) Empty() bool {
	return m.NodesOnlyHeadwater+m.NodesOnlyNaive+m.EdgesOnlyHeadwater+m.EdgesOnlyNaive == 0
}

func (m Mismatch) String() string {
	return fmt.Sprintf("nodes only in headwater %d, only in naive %d; edges only in headwater %d, only in naive %d; e.g. %s",
		m.NodesOnlyHeadwater, m.NodesOnlyNaive, m.EdgesOnlyHeadwater, m.EdgesOnlyNaive, strings.Join(m.Examples, "; "))
}

// Diff compares Headwater's answer with the naive one.
func Diff(hw, naive Answer) Mismatch {
	var m Mismatch
	note := func(s string) {
		if len(m.Examples) < maxListed {
			m.Examples = append(m.Examples, s)
		}
	}
	for _, k := range missing(hw.Nodes, naive.Nodes) {
		m.NodesOnlyHeadwater++
		note("node only in headwater: " + k)
	}
	for _, k := range missing(naive.Nodes, hw.Nodes) {
		m.NodesOnlyNaive++
		note("node only in naive: " + k)
	}
	for _, e := range missing(hw.Edges, naive.Edges) {
		m.EdgesOnlyHeadwater++
		note("edge only in headwater: " + e.String())
	}
	for _, e := range missing(naive.Edges, hw.Edges) {
		m.EdgesOnlyNaive++
		note("edge only in naive: " + e.String())
	}
	return m
}

// missing returns the members of a that b lacks, sorted.
func missing[K comparable](a, b map[K]bool) []K {
	var out []K
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(x, y K) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
	return out
}
