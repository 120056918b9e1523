package project

import (
	"sort"

	"github.com/headwater-data/headwater/graph"
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
	return a.Hash < b.Hash
}

// fieldHist is one history of a field: from its (re)creation to the schema that omitted it or the drop.
type fieldHist struct {
	Path, Type, Description, FieldID string
	From, To                         int64
}

// Key is the stable key of this history.
func (h *fieldHist) Key(datasetKey string) string { return graph.FieldKey(datasetKey, h.Path, h.From) }

// fieldHistories derives the field histories of a dataset from its observation log (a pure function); schema
// observations carry their fields or reference them by hash in schemas.
func fieldHistories(log []dsObs, schemas map[string][]olevent.SchemaField) []*fieldHist {
	return fieldHistoriesFrom(nil, log, schemas)
}

// fieldHistoriesFrom continues the fold from a sealed base (nil: from nothing): observations at or before base.T
// are already in it. Empty histories (a field added and removed at one instant) are left out: they were never
// valid, and their key would be the key of the history that starts at the same instant.
func fieldHistoriesFrom(base *dsBase, log []dsObs, schemas map[string][]olevent.SchemaField) []*fieldHist {
	all := foldFields(base, log, schemas)
	out := all[:0]
	for _, h := range all {
		if h.From != h.To {
			out = append(out, h)
		}
	}
	return out
}

// foldFields is the fold itself: every history, empty ones included (a sealed base keeps them, since a later
// schema may reopen one by its field id).
func foldFields(base *dsBase, log []dsObs, schemas map[string][]olevent.SchemaField) []*fieldHist {
	obs := append([]dsObs(nil), log...)
	sort.SliceStable(obs, func(i, j int) bool { return obsLess(obs[i], obs[j]) })
	var all []*fieldHist
	open := map[string]*fieldHist{}
	if base != nil {
		for i := range base.Hists {
			h := base.Hists[i]
			all = append(all, &h)
			if h.To == graph.OpenEnd {
				open[h.Path] = all[len(all)-1]
			}
		}
	}
	for _, o := range obs {
		if base != nil && o.T <= base.T {
			continue
		}
		switch o.Kind {
		case obsLife:
			if o.State == lcDrop || o.State == lcRename {
				if o.State == lcDrop {
					closeAll(open, o.T)
				}
			}
		case obsSchema:
			if o.Fields == nil {
				o.Fields = schemas[o.Hash]
			}
			all = applySchema(all, open, o)
		case obsMention:
			for _, p := range o.Paths {
				if open[p] == nil {
					h := &fieldHist{Path: p, From: o.T, To: graph.OpenEnd}
					open[p], all = h, append(all, h)
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

func closeAll(open map[string]*fieldHist, t int64) {
	for p, h := range open {
		h.To = t
		delete(open, p)
	}
}

func applySchema(all []*fieldHist, open map[string]*fieldHist, o dsObs) []*fieldHist {
	seen := map[string]bool{}
	for _, f := range o.Fields {
		seen[f.Path] = true
		h := open[f.Path]
		if h == nil {
			h = reopenByID(all, f)
		}
		if h == nil {
			h = &fieldHist{Path: f.Path, From: o.T}
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

// reopenByID finds a closed history of the same path with the same stable field id.
func reopenByID(all []*fieldHist, f olevent.SchemaField) *fieldHist {
	if f.FieldID == "" {
		return nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		if h := all[i]; h.Path == f.Path && h.FieldID == f.FieldID {
			return h
		}
	}
	return nil
}

// fieldAt picks the history of path that is valid at t; else the latest one that started before t; else the
// earliest. It returns nil when the dataset never had the path.
func fieldAt(hists []*fieldHist, path string, t int64) *fieldHist {
	var before, first *fieldHist
	for _, h := range hists {
		if h.Path != path {
			continue
		}
		if h.From <= t && t < h.To {
			return h
		}
		if h.From <= t && (before == nil || h.From > before.From) {
			before = h
		}
		if first == nil || h.From < first.From {
			first = h
		}
	}
	if before != nil {
		return before
	}
	return first
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
