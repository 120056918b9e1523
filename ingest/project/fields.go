package project

import (
	"slices"
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Kinds of entries in a dataset's observation log.
const (
	obsSchema  = "schema"  // a full schema: omitted fields close
	obsMention = "mention" // fields named by column lineage: open if needed, never close others
	obsLife    = "life"    // lifecycleStateChange
	obsDecl    = "decl"    // lineage facet: declared upstream datasets
)

// dsObs is one observation about a dataset, kept (sorted) in the dataset's state so derived state (fields,
// drops, declared lineage) can be recomputed whatever order events arrive in.
type dsObs struct {
	T      int64                 `json:"t"`
	Event  string                `json:"e,omitempty"` // "" for schema observations (their hash orders ties)
	Hash   string                `json:"h,omitempty"` // schema observations: key into dsState.Schemas
	Kind   string                `json:"k"`
	Fields []olevent.SchemaField `json:"f,omitempty"`
	Paths  []string              `json:"p,omitempty"`
	State  string                `json:"s,omitempty"`
	Keys   []string              `json:"d,omitempty"`
	Prod   string                `json:"pr,omitempty"`
	// DeclFields are the lineage facet's field-level declarations (obsDecl only).
	DeclFields []declField `json:"df,omitempty"`
	// R marks a schema or mention observed on read (an input's schema, a column-lineage input field): it folds
	// into the read layer, which never opens, closes or changes what the dataset's owners reported.
	R bool `json:"r,omitempty"`
}

// declField is one declared field mapping: input field -> this dataset's field Out.
type declField struct {
	In      string                   `json:"i"`
	InField string                   `json:"if"`
	Out     string                   `json:"o"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

func obsRank(k string) int {
	switch k {
	case obsLife:
		return 0
	case obsSchema:
		return 1
	case obsMention:
		return 2
	}
	return 3
}

func obsLess(a, b dsObs) bool {
	if a.T != b.T {
		return a.T < b.T
	}
	if ra, rb := obsRank(a.Kind), obsRank(b.Kind); ra != rb {
		return ra < rb
	}
	if a.Event != b.Event {
		return a.Event < b.Event
	}
	if a.Hash != b.Hash {
		return a.Hash < b.Hash
	}
	return !a.R && b.R // the owner's observation first
}

// fieldHistories derives the field histories of a dataset from its observation log (a pure function); schema
// observations carry their fields or reference them by hash in schemas.
func fieldHistories(log []dsObs, schemas map[string][]olevent.SchemaField) []*fold.FieldHist {
	return fieldHistoriesFrom(nil, log, schemas)
}

// fieldHistoriesFrom continues the fold from a sealed base (nil: from nothing): observations at or before base.T
// are already in it. Empty histories (a field added and removed at one instant) are left out: they were never
// valid, and their key would be the key of the history that starts at the same instant. So are the read histories
// of a path the owners reported: what owners report is never overridden by what readers saw.
func fieldHistoriesFrom(base *dsBase, log []dsObs, schemas map[string][]olevent.SchemaField) []*fold.FieldHist {
	all := foldFields(base, log, schemas)
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

// foldFields is the fold itself: every history, empty ones included (a sealed base keeps them, since a later
// schema may reopen one by its field id), read histories included. Two layers fold side by side: the owners'
// (schemas of written datasets, their column-lineage paths) and the readers' (dsObs.R). An owner's schema closes
// every open read history too (the owners said what the dataset holds now); a reader's touches only the read layer.
// A DROP closes both.
func foldFields(base *dsBase, log []dsObs, schemas map[string][]olevent.SchemaField) []*fold.FieldHist {
	obs := append([]dsObs(nil), log...)
	sort.SliceStable(obs, func(i, j int) bool { return obsLess(obs[i], obs[j]) })
	var all []*fold.FieldHist
	open := [2]map[string]*fold.FieldHist{{}, {}} // by layer: owners, readers
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
		case obsLife:
			if o.State == lcDrop {
				closeAll(open[0], o.T)
				closeAll(open[1], o.T)
			}
		case obsSchema:
			if o.Fields == nil {
				o.Fields = schemas[o.Hash]
			}
			if !o.R {
				closeAll(open[1], o.T)
			}
			all = applySchema(all, open[layer(o.R)], o)
		case obsMention:
			in := open[layer(o.R)]
			for _, p := range o.Paths {
				if in[p] == nil {
					h := &fold.FieldHist{Path: p, From: o.T, To: graph.OpenEnd, Read: o.R}
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

func closeAll(open map[string]*fold.FieldHist, t int64) {
	for p, h := range open {
		h.To = t
		delete(open, p)
	}
}

func applySchema(all []*fold.FieldHist, open map[string]*fold.FieldHist, o dsObs) []*fold.FieldHist {
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
			h = &fold.FieldHist{Path: f.Path, From: o.T, Read: o.R}
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
func renameByID(open map[string]*fold.FieldHist, o dsObs) {
	byID := map[string]*fold.FieldHist{}
	for _, h := range open {
		if h.FieldID != "" {
			byID[h.FieldID] = h
		}
	}
	type move struct {
		h    *fold.FieldHist
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
func reopenByID(all []*fold.FieldHist, f olevent.SchemaField, read bool) *fold.FieldHist {
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

// lifecycleTimes returns the dataset's cut times (DROP, RENAME: close its lineage intervals) and droppedAt (the
// latest DROP when no later CREATE or other observation revived it).
func lifecycleTimes(log []dsObs) (cuts []int64, droppedAt *int64) {
	// Only lifecycle observations matter, and they are rare: pick them out before sorting (a stable sort of the
	// subset orders it as the sorted whole would).
	var obs []dsObs
	for _, o := range log {
		if o.Kind == obsLife {
			obs = append(obs, o)
		}
	}
	sort.SliceStable(obs, func(i, j int) bool { return obsLess(obs[i], obs[j]) })
	for _, o := range obs {
		switch o.State {
		case lcDrop:
			t := o.T
			cuts, droppedAt = append(cuts, t), &t
		case lcRename:
			cuts = append(cuts, o.T)
		case lcCreate:
			droppedAt = nil
		}
	}
	return cuts, droppedAt
}

// repeatsLatestSchema reports whether a batch's change can leave the dataset's field histories as they are
// without folding the log again: every observation in it is a schema observation, later than every foldable
// observation in the log, of exactly the schema of the latest one (which is itself a schema observation). Applying
// the schema that is already in force, with nothing in between, opens and closes nothing (applySchema), so the
// fold over the log with the change equals the fold without it. The common case: a job's next run reports the
// schema it reported last time.
func repeatsLatestSchema(st *dsState, c *dsChange) bool {
	if len(c.obs) == 0 {
		return false
	}
	last := latestFoldable(st.Log)
	if last == nil || last.Kind != obsSchema || st.Schemas[last.Hash] == nil {
		return false
	}
	for _, o := range c.obs {
		if o.Kind != obsSchema || o.T <= last.T {
			return false
		}
		if o.schemaKey() != last.Hash {
			return false
		}
		// After an owner's schema S the read layer is closed and the owner layer holds exactly S: a reader's S
		// opens read histories only for paths the owners reported, which are left out. After a reader's S an
		// owner's S may open owner histories: not a repeat.
		if last.R && !o.R {
			return false
		}
	}
	return true
}

// latestFoldable is the log's last observation in fold order that the field fold depends on, or nil.
func latestFoldable(log []dsObs) *dsObs {
	var last *dsObs
	for i := range log {
		if o := &log[i]; foldable(*o) && (last == nil || obsLess(*last, *o)) {
			last = o
		}
	}
	return last
}
