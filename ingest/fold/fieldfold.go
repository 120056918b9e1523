package fold

import (
	"slices"
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// FieldBase is the field fold of a sealed stretch of a dataset's log: the histories after folding every
// observation at or before T (empty ones included: a later schema may reopen one by its field id).
type FieldBase struct {
	T     int64
	Hists []FieldHist
}

// FieldHistories derives the field histories of a dataset from its observation log, continuing from a sealed
// base (nil: from nothing): observations at or before base.T are already in it. Schema observations carry their
// fields or reference them by hash in schemas. Empty histories (a field added and removed at one instant) are
// left out: they were never valid, and their key would be the key of the history that starts at the same
// instant. So are the read histories of a path the owners reported: what owners report is never overridden by
// what readers saw.
func FieldHistories(base *FieldBase, log []Obs, schemas map[string][]olevent.SchemaField) []*FieldHist {
	all := FoldFields(base, log, schemas)
	owned := map[string]bool{}
	for _, h := range all {
		if !h.Read && h.From != h.To {
			owned[h.Path] = true
			for _, n := range h.Names {
				owned[n.P] = true
			}
		}
	}
	out := all[:0]
	for _, h := range all {
		if h.From != h.To && !(h.Read && owned[h.Path]) {
			out = append(out, h)
		}
	}
	return out
}

// FoldFields is the fold itself: every history, empty ones included (a sealed base keeps them, since a later
// schema may reopen one by its field id), read histories included. Two layers fold side by side: the owners'
// (schemas of written datasets, their column-lineage paths) and the readers' (Obs.R). An owner's schema closes
// every open read history too (the owners said what the dataset holds now); a reader's touches only the read layer.
// A DROP closes both.
func FoldFields(base *FieldBase, log []Obs, schemas map[string][]olevent.SchemaField) []*FieldHist {
	obs := append([]Obs(nil), log...)
	sort.SliceStable(obs, func(i, j int) bool { return ObsLess(obs[i], obs[j]) })
	var all []*FieldHist
	open := [2]map[string]*FieldHist{{}, {}} // by layer: owners, readers
	if base != nil {
		for i := range base.Hists {
			h := base.Hists[i]
			h.Names = slices.Clone(h.Names) // a rename appends: never into the sealed base's array
			all = append(all, &h)
			if h.To == graph.OpenEnd {
				open[layer(h.Read)][h.Path] = all[len(all)-1]
			}
		}
	}
	for _, o := range obs {
		if base != nil && o.T <= base.T {
			continue
		}
		switch o.Kind {
		case ObsLife:
			if o.State == LifeDrop {
				closeAll(open[0], o.T)
				closeAll(open[1], o.T)
			}
		case ObsSchema:
			if o.Fields == nil {
				o.Fields = schemas[o.Hash]
			}
			if !o.R {
				closeAll(open[1], o.T)
			}
			all = applySchema(all, open[layer(o.R)], o)
		case ObsMention:
			in := open[layer(o.R)]
			for _, p := range o.Paths {
				if in[p] == nil {
					h := &FieldHist{Path: p, From: o.T, To: graph.OpenEnd, Read: o.R}
					in[p], all = h, append(all, h)
				}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Path != all[j].Path {
			return all[i].Path < all[j].Path
		}
		if all[i].From != all[j].From {
			return all[i].From < all[j].From
		}
		return all[i].To < all[j].To
	})
	return all
}

// layer is the index of the fold layer of an observation or history: 0 owners, 1 readers.
func layer(read bool) int {
	if read {
		return 1
	}
	return 0
}

func closeAll(open map[string]*FieldHist, t int64) {
	for p, h := range open {
		h.To = t
		delete(open, p)
	}
}

func applySchema(all []*FieldHist, open map[string]*FieldHist, o Obs) []*FieldHist {
	renameByID(open, o)
	seen := map[string]bool{}
	for _, f := range o.Fields {
		seen[f.Path] = true
		h := open[f.Path]
		if h != nil && f.FieldID != "" && h.FieldID != "" && h.FieldID != f.FieldID {
			// The same name under another stable id: the old field was dropped and this one created.
			h.To = o.T
			delete(open, f.Path)
			h = nil
		}
		if h == nil {
			if h = reopenByID(all, f, o.R); h != nil && h.Path != f.Path {
				h.Rename(f.Path, o.T) // reopened under an earlier name of the field
			}
		}
		if h == nil {
			h = &FieldHist{Path: f.Path, From: o.T, Read: o.R}
			all = append(all, h)
		}
		h.To, h.Type, h.Description = graph.OpenEnd, f.Type, f.Description
		if f.FieldID != "" {
			h.FieldID = f.FieldID
		}
		open[f.Path] = h
	}
	for p, h := range open {
		if !seen[p] {
			h.To = o.T
			delete(open, p)
		}
	}
	return all
}

// renameByID applies a schema's renames: an open history whose stable field id the schema gives to another
// path continues under that path from the schema's time (same Field node, ADR 0041). All renames of one schema
// are taken out before any is put back, so names swapped between two fields swap; an open history of another id
// that a rename displaces from its path is closed (the schema gave its name to another field).
func renameByID(open map[string]*FieldHist, o Obs) {
	byID := map[string]*FieldHist{}
	for _, h := range open {
		if h.FieldID != "" {
			byID[h.FieldID] = h
		}
	}
	type move struct {
		h    *FieldHist
		path string
	}
	var moves []move
	for _, f := range o.Fields {
		if h := byID[f.FieldID]; f.FieldID != "" && h != nil && h.Path != f.Path {
			moves = append(moves, move{h, f.Path})
		}
	}
	for _, m := range moves {
		if open[m.h.Path] == m.h {
			delete(open, m.h.Path)
		}
	}
	for _, m := range moves {
		if g := open[m.path]; g != nil {
			g.To = o.T
		}
		m.h.Rename(m.path, o.T)
		open[m.path] = m.h
	}
}

// reopenByID finds a closed history of the same path, layer and stable field id.
func reopenByID(all []*FieldHist, f olevent.SchemaField, read bool) *FieldHist {
	if f.FieldID == "" {
		return nil
	}
	for _, a := range slices.Backward(all) {
		if h := a; h.Named(f.Path) && h.FieldID == f.FieldID && h.Read == read {
			return h
		}
	}
	return nil
}

// LifecycleTimes returns the dataset's cut times (DROP, RENAME: close its lineage intervals) and droppedAt (the
// latest DROP when no later CREATE or other observation revived it).
func LifecycleTimes(log []Obs) (cuts []int64, droppedAt *int64) {
	// Only lifecycle observations matter, and they are rare: pick them out before sorting (a stable sort of the
	// subset orders it as the sorted whole would).
	var obs []Obs
	for _, o := range log {
		if o.Kind == ObsLife {
			obs = append(obs, o)
		}
	}
	sort.SliceStable(obs, func(i, j int) bool { return ObsLess(obs[i], obs[j]) })
	for _, o := range obs {
		switch o.State {
		case LifeDrop:
			t := o.T
			cuts, droppedAt = append(cuts, t), &t
		case LifeRename:
			cuts = append(cuts, o.T)
		case LifeCreate:
			droppedAt = nil
		}
	}
	return cuts, droppedAt
}
