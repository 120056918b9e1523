package fold

import (
	"slices"
	"sort"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// ColsDoc is a run's column lineage for one output, as stored (JSON) on its WROTE relationship.
type ColsDoc struct {
	Fields  []ColField `json:"f,omitempty"`
	Dataset []ColDep   `json:"d,omitempty"`
}

type ColField struct {
	In      string                   `json:"i"`
	InField string                   `json:"if"`
	Out     string                   `json:"o"`
	FirstAt int64                    `json:"t"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

type ColDep struct {
	In      string                   `json:"i"`
	FirstAt int64                    `json:"t"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

func DecodeCols(v any) *ColsDoc {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil
	}
	var d ColsDoc
	if json.Unmarshal([]byte(s), &d) != nil {
		return nil
	}
	return &d
}

// ColEdge is one derived COLUMN_FEEDS relationship.
type ColEdge struct {
	From, To string // Field keys
	Props    map[string]any
}

// IndirectEdge is one derived INDIRECT_FEEDS relationship.
type IndirectEdge struct {
	From, To string // Dataset keys
	Props    map[string]any
}

// mapping is one column mapping of one output dataset.
type mapping struct {
	Out      string `json:"o"`
	In       string `json:"i"`
	InField  string `json:"if"`
	OutField string `json:"of"`
}

// ColAgg is the fold state of one COLUMN_FEEDS relationship: a mapping resolved to the field histories valid at
// its listings (a re-created column gets its own relationship), foldable run by run in time order like edgeAgg.
type ColAgg struct {
	M      mapping                  `json:"m"`
	From   string                   `json:"a"` // Field keys
	To     string                   `json:"b"`
	Fold   foldState                `json:"f"`
	LastAt int64                    `json:"t"` // the latest listing (by time, then run id)
	RunID  string                   `json:"r"`
	TT     []olevent.Transformation `json:"tt,omitempty"`
	// TL is the transformation history: one stretch per change of the reported kinds, oldest first, at most
	// ColumnTransformHistoryMax (projection version 10, ADR 0091).
	TL []TStretch `json:"tl,omitempty"`
}

// TStretch is a stretch of listings of one mapping that reported the same transformation kinds (type, subtype,
// masking): from the first listing's time, with the transformations of its latest listing.
type TStretch struct {
	At int64                    `json:"a"`
	TT []olevent.Transformation `json:"tt,omitempty"`
}

// ColumnTransformHistoryMax bounds the stretches a column edge keeps: a job whose transformations change on
// every run keeps its newest 64 changes, and an asOf before the oldest kept one answers that one's kinds.
const ColumnTransformHistoryMax = 64

// addListing folds one listing (in (time, run id) order) into the transformation history: a change of kinds
// opens a stretch, the same kinds update the current stretch's transformations (descriptions may change).
func (a *ColAgg) addListing(at int64, tt []olevent.Transformation) {
	if n := len(a.TL); n > 0 && sameKinds(a.TL[n-1].TT, tt) {
		a.TL[n-1].TT = tt
		return
	}
	a.TL = append(a.TL, TStretch{At: at, TT: tt})
	if len(a.TL) > ColumnTransformHistoryMax {
		a.TL = a.TL[len(a.TL)-ColumnTransformHistoryMax:]
	}
}

// sameKinds says a and b report the same transformation kinds (type, subtype, masking) in any order; the
// descriptions do not count.
func sameKinds(a, b []olevent.Transformation) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.EqualFunc(a, b, func(x, y olevent.Transformation) bool { // the common case: no sort, no allocation
		return x.Type == y.Type && x.Subtype == y.Subtype && x.Masking == y.Masking
	}) {
		return true
	}
	kinds := func(ts []olevent.Transformation) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.Type + "/" + t.Subtype + "/" + strconv.FormatBool(t.Masking)
		}
		sort.Strings(out)
		return out
	}
	return slices.Equal(kinds(a), kinds(b))
}

func (a *ColAgg) key() string {
	return a.M.Out + "\x00" + a.M.OutField + "\x00" + a.M.In + "\x00" + a.M.InField + "\x00" + a.From + "\x00" + a.To
}

// FoldColumns folds the runs' column lineage (all of whose points lie after prev's) into a copy of prev: per
// mapping and field pair, listings open intervals and a COMPLETE run that reports column lineage for the output
// but omits the mapping closes them. Fields are resolved to the history valid at the listing time.
func FoldColumns(prev map[string]*ColAgg, runs []Run, hists map[string][]*FieldHist) map[string]*ColAgg {
	type listing struct {
		ev    Sighting
		runID string
		at    int64
		tt    []olevent.Transformation
	}
	lists := map[string][]listing{}
	out := make(map[string]*ColAgg, len(prev))
	for k, a := range prev {
		c := *a
		c.TL = slices.Clone(a.TL)
		out[k] = &c
	}
	for i := range runs {
		r := &runs[i]
		for _, io := range r.IO {
			if io.Dir != graph.RelWrote || io.Cols == nil {
				continue
			}
			for _, f := range io.Cols.Fields {
				in := ResolveField(hists[f.In], r.readSchema(f.In), f.InField, f.FirstAt)
				o := ResolveField(hists[io.DS], io.Schema, f.Out, f.FirstAt)
				if in == nil || o == nil {
					continue
				}
				a := &ColAgg{M: mapping{Out: io.DS, In: f.In, InField: f.InField, OutField: f.Out}, From: in.Key(f.In),
					To: o.Key(io.DS)}
				k := a.key()
				if out[k] == nil {
					out[k] = a
				}
				lists[k] = append(lists[k], listing{ev: Sighting{Start: r.Start, Lists: true, ListedAt: f.FirstAt,
					Pub: io.Pub}, runID: r.ID, at: f.FirstAt, tt: f.TT})
			}
		}
	}
	closers := map[mapping][]Sighting{}
	for k, a := range out {
		cl, ok := closers[a.M]
		if !ok {
			cl = closingRuns(runs, a.M)
			closers[a.M] = cl
		}
		ev := append([]Sighting(nil), cl...)
		for _, l := range lists[k] {
			ev = append(ev, l.ev)
		}
		if len(ev) == 0 {
			continue
		}
		a.Fold = foldIntervals(a.Fold, ev, nil)
		ls := lists[k]
		sort.SliceStable(ls, func(i, j int) bool {
			return ls[i].at < ls[j].at || (ls[i].at == ls[j].at && ls[i].runID < ls[j].runID)
		})
		for _, l := range ls {
			if a.RunID == "" || l.at > a.LastAt || (l.at == a.LastAt && l.runID > a.RunID) {
				a.LastAt, a.RunID, a.TT = l.at, l.runID, l.tt
			}
			a.addListing(l.at, l.tt)
		}
	}
	return out
}

// ColumnEdges renders the folded COLUMN_FEEDS of a job.
func ColumnEdges(jobKey string, aggs map[string]*ColAgg) []ColEdge {
	keys := ordered.Keys(aggs)
	var out []ColEdge
	for _, k := range keys {
		a := aggs[k]
		ivs := a.Fold.intervals()
		if len(ivs) == 0 || a.RunID == "" {
			continue
		}
		props := graph.IntervalProps(ivs)
		props["jobKey"], props["kind"] = jobKey, graph.KindObserved
		props["lastRunId"], props["lastObservedAt"] = a.RunID, a.LastAt
		AddTransformations(props, a.TT)
		props[graph.ColumnTransformHistoryProp] = transformHistory(a.TL)
		out = append(out, ColEdge{From: a.From, To: a.To, Props: props})
	}
	return out
}

// transformHistory is a column edge's stored transformation history: the JSON of its stretches when the kinds
// changed, nil (no property) while every listing reported the same.
func transformHistory(tl []TStretch) any {
	if len(tl) < 2 {
		return nil
	}
	h := make([]graph.TransformationsFrom, len(tl))
	for i, st := range tl {
		h[i].At = st.At
		for _, t := range st.TT {
			h[i].Types = append(h[i].Types, t.Type)
			h[i].Subtypes = append(h[i].Subtypes, t.Subtype)
			h[i].Masking = append(h[i].Masking, t.Masking)
			h[i].Descriptions = append(h[i].Descriptions, t.Description)
		}
	}
	b, _ := json.Marshal(h) // strings, bools and numbers: it cannot fail
	return string(b)
}

// closingRuns are the COMPLETE runs that reported column lineage for the mapping's output but not the mapping.
func closingRuns(runs []Run, m mapping) []Sighting {
	var ev []Sighting
	for i := range runs {
		r := &runs[i]
		if r.State != olevent.TypeComplete {
			continue
		}
		for _, io := range r.IO {
			if io.Dir == graph.RelWrote && io.DS == m.Out && io.Cols != nil && len(io.Cols.Fields) > 0 &&
				!io.Cols.has(m) {
				ev = append(ev, Sighting{Start: r.Start, CanClose: true, CloseAt: r.Ended})
			}
		}
	}
	return ev
}

// firstNaming is the earliest listing time of a mapping from (or dataset-level dependency on) dataset in.
func (d *ColsDoc) firstNaming(in string) (int64, bool) {
	var at int64
	found := false
	for _, f := range d.Fields {
		if f.In == in && (!found || f.FirstAt < at) {
			at, found = f.FirstAt, true
		}
	}
	for _, x := range d.Dataset {
		if x.In == in && (!found || x.FirstAt < at) {
			at, found = x.FirstAt, true
		}
	}
	return at, found
}

func (d *ColsDoc) has(m mapping) bool {
	for _, f := range d.Fields {
		if f.In == m.In && f.InField == m.InField && f.Out == m.OutField {
			return true
		}
	}
	return false
}

func AddTransformations(props map[string]any, tt []olevent.Transformation) {
	types, subs, mask, desc := make([]any, len(tt)), make([]any, len(tt)), make([]any, len(tt)), make([]any, len(tt))
	for i, t := range tt {
		types[i], subs[i], mask[i], desc[i] = t.Type, t.Subtype, t.Masking, t.Description
	}
	props["tTypes"], props["tSubtypes"], props["tMasking"], props["tDescriptions"] = types, subs, mask, desc
}

// IndAgg is the fold state of one INDIRECT_FEEDS relationship (the column-lineage facet's dataset-level
// dependency of an output on an input), kept once per (input, output, job).
type IndAgg struct {
	In       string    `json:"i"`
	Out      string    `json:"o"`
	Fold     foldState `json:"f"`
	Subtypes []string  `json:"s,omitempty"`
}

// FoldIndirect folds the runs' dataset-level column-lineage dependencies into a copy of prev.
func FoldIndirect(prev map[string]*IndAgg, runs []Run) map[string]*IndAgg {
	lists := map[string][]Sighting{}
	out := make(map[string]*IndAgg, len(prev))
	for k, a := range prev {
		c := *a
		c.Subtypes = append([]string(nil), a.Subtypes...)
		out[k] = &c
	}
	for i := range runs {
		r := &runs[i]
		for _, io := range r.IO {
			if io.Dir != graph.RelWrote || io.Cols == nil {
				continue
			}
			for _, d := range io.Cols.Dataset {
				k := d.In + "\x00" + io.DS
				a := out[k]
				if a == nil {
					a = &IndAgg{In: d.In, Out: io.DS}
					out[k] = a
				}
				lists[k] = append(lists[k], Sighting{Start: r.Start, Lists: true, ListedAt: d.FirstAt, Pub: io.Pub})
				for _, t := range d.TT {
					a.Subtypes = append(a.Subtypes, t.Subtype)
				}
			}
		}
	}
	for k, a := range out {
		ev := append(lists[k], datasetClosers(runs, a.In, a.Out)...)
		if len(ev) > 0 {
			a.Fold = foldIntervals(a.Fold, ev, nil)
		}
		sort.Strings(a.Subtypes)
		a.Subtypes = compactStrings(a.Subtypes)
	}
	return out
}

// IndirectEdges renders the folded INDIRECT_FEEDS of a job.
func IndirectEdges(jobKey string, aggs map[string]*IndAgg) []IndirectEdge {
	keys := ordered.Keys(aggs)
	var out []IndirectEdge
	for _, k := range keys {
		a := aggs[k]
		ivs := a.Fold.intervals()
		if len(ivs) == 0 {
			continue
		}
		props := graph.IntervalProps(ivs)
		subtypes := a.Subtypes
		if subtypes == nil {
			subtypes = []string{}
		}
		props["jobKey"], props["outputKey"], props["subtypes"] = jobKey, a.Out, toAny(subtypes)
		out = append(out, IndirectEdge{From: a.In, To: a.Out, Props: props})
	}
	return out
}

func datasetClosers(runs []Run, in, out string) []Sighting {
	var ev []Sighting
	for i := range runs {
		r := &runs[i]
		if r.State != olevent.TypeComplete {
			continue
		}
		for _, io := range r.IO {
			if io.Dir != graph.RelWrote || io.DS != out || io.Cols == nil || len(io.Cols.Dataset) == 0 {
				continue
			}
			found := false
			for _, d := range io.Cols.Dataset {
				found = found || d.In == in
			}
			if !found {
				ev = append(ev, Sighting{Start: r.Start, CanClose: true, CloseAt: r.Ended})
			}
		}
	}
	return ev
}

// ResolveField is the field history a column reference (path, at t) names (ADR 0065): with the schema of the
// snapshot the run read or wrote (path -> Iceberg field id; nil when none), the history with the field id the
// schema gives the path, whatever it is called at t (valid at t, else the latest that started by t, else the
// first); a path the schema lacks, or a field id no history has, falls back to FieldAt (the name at t).
func ResolveField(hists []*FieldHist, schema map[string]string, path string, t int64) *FieldHist {
	if id := schema[path]; id != "" {
		var before, first *FieldHist
		for _, h := range hists {
			if h.FieldID != id {
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
		if first != nil {
			return first
		}
	}
	return FieldAt(hists, path, t)
}

// readSchema is the schema of the version of ds the run read (nil when it read none with a recorded schema).
func (r *Run) readSchema(ds string) map[string]string {
	for _, io := range r.IO {
		if io.Dir == graph.RelRead && io.DS == ds {
			return io.Schema
		}
	}
	return nil
}
