package project

import (
	"slices"
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Temporal tags (projection version 6, docs/adr/0066-temporal-tags.md). A dataset's state keeps every tags
// facet its owners reported (time, event id, the tags), the tag log, next to the observation log; what derives
// from it is the dataset's tag history: per tag, the intervals it was in force, from the event time of the facet
// that set it to the event time of the first later facet without it (graph.OpenEnd while in force), with its
// source and the event that set it. The latest facet replaces the previous one, as before; the current list
// (Dataset.tags) is the last interval's. The log, not the history, is the state, so the history is the same in
// whatever order the facets arrive.

// tagObs is one tags facet of a dataset's owner: at T, event E, the tags it listed (none: it removed them all).
type tagObs struct {
	T int64         `json:"t"`
	E string        `json:"e"`
	V []olevent.Tag `json:"v,omitempty"`
}

func tagObsLess(a, b tagObs) bool { return a.T < b.T || (a.T == b.T && a.E < b.E) }

// mergeTags adds a batch's tags facets to the tag log, sorted; a facet already there (same time and event: a
// replay) is kept once.
func (st *dsState) mergeTags(obs []tagObs) {
	for _, o := range obs {
		i, found := slices.BinarySearchFunc(st.Tags, o, func(a, b tagObs) int {
			switch {
			case tagObsLess(a, b):
				return -1
			case tagObsLess(b, a):
				return 1
			}
			return 0
		})
		if !found {
			st.Tags = slices.Insert(st.Tags, i, o)
		}
	}
}

// tagName renders a tag as Dataset.tags does: `[field:]key[=value]`.
func tagName(t olevent.Tag) string { return t.Name() }

// tagHistory derives the tag history from a sorted tag log: one interval per tag and stretch in force, ordered
// by name then start.
func tagHistory(log []tagObs) []graph.TagInterval {
	open := map[string]*graph.TagInterval{}
	var out []graph.TagInterval
	for _, o := range log {
		now := map[string]olevent.Tag{}
		for _, t := range o.V {
			now[tagName(t)] = t
		}
		for name, iv := range open {
			if _, ok := now[name]; !ok {
				iv.ValidTo = o.T
				out = append(out, *iv)
				delete(open, name)
			}
		}
		for name, t := range now {
			if _, ok := open[name]; !ok {
				open[name] = &graph.TagInterval{Name: name, Source: t.Source, ValidFrom: o.T, ValidTo: graph.OpenEnd, EventID: o.E}
			}
		}
	}
	for _, iv := range open {
		out = append(out, *iv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ValidFrom < out[j].ValidFrom
	})
	return out
}

// tagProps are the properties the tag log gives the Dataset node: tagHistory (JSON, graph.TagInterval) and
// tagNames (every tag ever in force, sorted: what the graph-wide flow's scan pre-selects on). Nothing without a
// tag log, so a dataset no tags facet ever named has neither (as version 5 wrote it).
func tagProps(st *dsState, props map[string]any) {
	if len(st.Tags) == 0 {
		return
	}
	h := tagHistory(st.Tags)
	b, _ := json.Marshal(h)
	props["tagHistory"] = string(b)
	var names []string
	for _, iv := range h {
		names = append(names, iv.Name)
	}
	props["tagNames"] = toAny(compactStrings(names))
}
