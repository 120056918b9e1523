package project

import (
	"slices"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Temporal tags (projection version 6, docs/adr/0066-temporal-tags.md). A dataset's state keeps every tags
// facet its owners reported (time, event id, the tags), the tag log, next to the observation log; what derives
// from it is the dataset's tag history: per tag, the intervals it was in force, from the event time of the facet
// that set it to the event time of the first later facet without it (graph.OpenEnd while in force), with its
// source, the event that set it and its principal (By, projection version 8, ADR 0086). The latest facet replaces the previous one, as before; the current list
// (Dataset.tags) is the last interval's. The log, not the history, is the state, so the history is the same in
// whatever order the facets arrive.

// tagObs is one tags facet of a dataset's owner: at T, event E sent by principal B (projection version 8, ADR
// 0086; "" in a log version 7 wrote, until the upgrade fills it from the archive), the tags it listed (none: it
// removed them all).
type tagObs struct {
	T int64         `json:"t"`
	E string        `json:"e"`
	B string        `json:"b,omitempty"`
	V []olevent.Tag `json:"v,omitempty"`
}

func tagObsLess(a, b tagObs) bool {
	return a.T < b.T || (a.T == b.T && (a.E < b.E || (a.E == b.E && a.B < b.B)))
}

// mergeTags adds a batch's tags facets to the tag log, sorted; a facet already there (same time, event and
// principal: a replay) is kept once, and one a version-7 log holds without its principal gets it.
func (st *dsState) mergeTags(obs []tagObs) {
	for _, o := range obs {
		if o.B != "" {
			if i := slices.IndexFunc(st.Tags, func(x tagObs) bool { return x.T == o.T && x.E == o.E && x.B == "" }); i >= 0 {
				st.Tags = slices.Delete(st.Tags, i, i+1) // re-inserted below with its principal
			}
		}
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
				open[name] = &graph.TagInterval{Name: name, Source: t.Source, ValidFrom: o.T, ValidTo: graph.OpenEnd, EventID: o.E, By: o.B}
			}
		}
	}
	for _, iv := range open {
		out = append(out, *iv)
	}
	graph.SortTagIntervals(out)
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
