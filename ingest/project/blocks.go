package project

import (
	"slices"
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Explicit governance blocks (projection version 7, docs/adr/0067-governance-tags-and-blocks-by-mutation.md). A
// dataset's owners send its full block list in the headwater_governance_block facet (the blocks mutations send
// it for a principal holding MANAGE_TAGS); like tags (tags.go) the state keeps every such facet (time, event,
// principal, the blocks), the block log, and derives the block history: per block, the intervals it was in force,
// from the event time of the facet that listed it to that of the first later facet without it. A facet on a
// dataset its sender does not own is dropped with the other owner facets (ownership.go). The log, not the
// history, is the state, so the history is the same whatever order the facets arrive in.

// blockRec is one block of a facet, its edge canonicalised as the event's identities are.
type blockRec struct {
	Field  string           `json:"f"`
	Edge   *graph.BlockEdge `json:"x,omitempty"`
	Reason string           `json:"r"`
}

// blockObs is one block facet of a dataset's owner: at T, event E sent by principal B, the blocks it listed
// (none: it removed them all).
type blockObs struct {
	T int64      `json:"t"`
	E string     `json:"e"`
	B string     `json:"b"`
	V []blockRec `json:"v,omitempty"`
}

func blockObsLess(a, b blockObs) bool { return a.T < b.T || (a.T == b.T && a.E < b.E) }

// blockRecs canonicalises a decoded facet's blocks (nil stays nil: no facet).
func blockRecs(bs []olevent.Block, canon Canonicalizer) *[]blockRec {
	if bs == nil {
		return nil
	}
	out := make([]blockRec, 0, len(bs))
	for _, b := range bs {
		br := blockRec{Field: b.Field, Reason: b.Reason}
		if e := b.Edge; e != nil {
			be := &graph.BlockEdge{JobNamespace: e.JobNamespace, JobName: e.JobName, Field: e.From.Field}
			if ns, nm, err := canon.Job(e.JobNamespace, e.JobName); err == nil {
				be.JobNamespace, be.JobName = ns, nm
			}
			be.JobKey = jobKey(be.JobNamespace, be.JobName)
			from := newIdent(e.From.Namespace, e.From.Name, canon)
			be.Namespace, be.Name = from.NS, from.Name
			br.Edge = be
		}
		out = append(out, br)
	}
	return &out
}

// mergeBlocks adds a batch's block facets to the block log, sorted; a facet already there (a replay) is kept once.
func (st *dsState) mergeBlocks(obs []blockObs) {
	for _, o := range obs {
		i, found := slices.BinarySearchFunc(st.Blocks, o, func(a, b blockObs) int {
			switch {
			case blockObsLess(a, b):
				return -1
			case blockObsLess(b, a):
				return 1
			}
			return 0
		})
		if !found {
			st.Blocks = slices.Insert(st.Blocks, i, o)
		}
	}
}

// blockHistory derives the block history from a sorted block log: one interval per block and stretch in force,
// ordered by block then start.
func blockHistory(log []blockObs) []graph.BlockInterval {
	open := map[string]*graph.BlockInterval{}
	var out []graph.BlockInterval
	for _, o := range log {
		now := map[string]graph.BlockInterval{}
		for _, b := range o.V {
			iv := graph.BlockInterval{Field: b.Field, Edge: b.Edge, By: o.B, Reason: b.Reason, ValidFrom: o.T,
				ValidTo: graph.OpenEnd, EventID: o.E}
			if _, dup := now[iv.Key()]; !dup {
				now[iv.Key()] = iv
			}
		}
		for k, iv := range open {
			if _, ok := now[k]; !ok {
				iv.ValidTo = o.T
				out = append(out, *iv)
				delete(open, k)
			}
		}
		for k, iv := range now {
			if _, ok := open[k]; !ok {
				open[k] = &iv
			}
		}
	}
	for _, iv := range open {
		out = append(out, *iv)
	}
	sort.Slice(out, func(i, j int) bool {
		if ki, kj := out[i].Key(), out[j].Key(); ki != kj {
			return ki < kj
		}
		return out[i].ValidFrom < out[j].ValidFrom
	})
	return out
}

// blockProps is the property the block log gives the Dataset node: blockHistory (JSON, graph.BlockInterval).
// Nothing without a block log, so a dataset no block facet ever named has none (as version 6 wrote it).
func blockProps(st *dsState, props map[string]any) {
	if len(st.Blocks) == 0 {
		return
	}
	b, _ := json.Marshal(blockHistory(st.Blocks))
	props["blockHistory"] = string(b)
}
