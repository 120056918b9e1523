package project

import (
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// colsDoc is a run's column lineage for one output, as stored (JSON) on its WROTE relationship.
type colsDoc struct {
	Fields  []colField `json:"f,omitempty"`
	Dataset []colDep   `json:"d,omitempty"`
}

type colField struct {
	In      string                   `json:"i"`
	InField string                   `json:"if"`
	Out     string                   `json:"o"`
	FirstAt int64                    `json:"t"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

type colDep struct {
	In      string                   `json:"i"`
	FirstAt int64                    `json:"t"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

func encodeCols(c *runCols) string {
	var d colsDoc
	for p, o := range c.Fields {
		d.Fields = append(d.Fields, colField{In: p.InKey, InField: p.InField, Out: p.OutField, FirstAt: o.FirstAt, TT: o.TT})
	}
	sort.Slice(d.Fields, func(i, j int) bool {
		a, b := d.Fields[i], d.Fields[j]
		if a.Out != b.Out {
			return a.Out < b.Out
		}
		if a.In != b.In {
			return a.In < b.In
		}
		return a.InField < b.InField
	})
	for k, o := range c.Dataset {
		d.Dataset = append(d.Dataset, colDep{In: k, FirstAt: o.FirstAt, TT: o.TT})
	}
	sort.Slice(d.Dataset, func(i, j int) bool { return d.Dataset[i].In < d.Dataset[j].In })
	b, _ := json.Marshal(d)
	return string(b)
}

func decodeCols(v any) *colsDoc {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil
	}
	var d colsDoc
	if json.Unmarshal([]byte(s), &d) != nil {
		return nil
	}
	return &d
}

// colEdge is one derived COLUMN_FEEDS relationship.
type colEdge struct {
	From, To string // Field keys
	Props    map[string]any
}

// indirectEdge is one derived INDIRECT_FEEDS relationship.
type indirectEdge struct {
	From, To string // Dataset keys
	Props    map[string]any
}

// mapping is one column mapping of one output dataset.
type mapping struct{ Out, In, InField, OutField string }

// colListing is a run's listing of a mapping, resolved to field histories at the listing time.
type colListing struct {
	run      *jobRun
	at       int64
	pub      string
	tt       []olevent.Transformation
	from, to string
}

// columnEdges derives COLUMN_FEEDS of a job: per (input field, output field) an interval set over the job's runs,
// where a COMPLETE run that reports column lineage for the output but omits the mapping closes it. Fields are
// resolved to the history valid at the listing time, so a re-created column gets its own edge.
func columnEdges(jobKey string, runs []jobRun, hists map[string][]*fieldHist) []colEdge {
	lists := map[mapping][]colListing{}
	for i := range runs {
		r := &runs[i]
		for _, io := range r.IO {
			if io.Dir != graph.RelWrote || io.Cols == nil {
				continue
			}
			for _, f := range io.Cols.Fields {
				in, out := fieldAt(hists[f.In], f.InField, f.FirstAt), fieldAt(hists[io.DS], f.Out, f.FirstAt)
				if in == nil || out == nil {
					continue
				}
				m := mapping{Out: io.DS, In: f.In, InField: f.InField, OutField: f.Out}
				lists[m] = append(lists[m], colListing{run: r, at: f.FirstAt, pub: io.Pub, tt: f.TT,
					from: in.Key(f.In), to: out.Key(io.DS)})
			}
		}
	}
	var out []colEdge
	for _, m := range sortedMappings(lists) {
		out = append(out, mappingEdges(jobKey, m, lists[m], runs)...)
	}
	return out
}

func mappingEdges(jobKey string, m mapping, ls []colListing, runs []jobRun) []colEdge {
	groups := map[[2]string][]colListing{}
	for _, l := range ls {
		k := [2]string{l.from, l.to}
		groups[k] = append(groups[k], l)
	}
	closers := closingRuns(runs, m)
	keys := make([][2]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	var out []colEdge
	for _, k := range keys {
		ev := append([]Evidence(nil), closers...)
		var latest colListing
		for _, l := range groups[k] {
			ev = append(ev, Evidence{Start: l.run.Start, Lists: true, ListedAt: l.at, Pub: l.pub})
			if latest.run == nil || l.at > latest.at || (l.at == latest.at && l.run.ID > latest.run.ID) {
				latest = l
			}
		}
		ivs := Intervals(ev, nil)
		if len(ivs) == 0 {
			continue
		}
		props := intervalProps(ivs)
		props["jobKey"], props["kind"] = jobKey, graph.KindObserved
		props["lastRunId"], props["lastObservedAt"] = latest.run.ID, latest.at
		addTransformations(props, latest.tt)
		out = append(out, colEdge{From: k[0], To: k[1], Props: props})
	}
	return out
}

// closingRuns are the COMPLETE runs that reported column lineage for the mapping's output but not the mapping.
func closingRuns(runs []jobRun, m mapping) []Evidence {
	var ev []Evidence
	for i := range runs {
		r := &runs[i]
		if r.State != olevent.TypeComplete {
			continue
		}
		for _, io := range r.IO {
			if io.Dir == graph.RelWrote && io.DS == m.Out && io.Cols != nil && len(io.Cols.Fields) > 0 &&
				!io.Cols.has(m) {
				ev = append(ev, Evidence{Start: r.Start, CanClose: true, CloseAt: r.Ended})
			}
		}
	}
	return ev
}

func (d *colsDoc) has(m mapping) bool {
	for _, f := range d.Fields {
		if f.In == m.In && f.InField == m.InField && f.Out == m.OutField {
			return true
		}
	}
	return false
}

func sortedMappings(m map[mapping][]colListing) []mapping {
	out := make([]mapping, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Out != b.Out {
			return a.Out < b.Out
		}
		if a.OutField != b.OutField {
			return a.OutField < b.OutField
		}
		if a.In != b.In {
			return a.In < b.In
		}
		return a.InField < b.InField
	})
	return out
}

func intervalProps(ivs []Interval) map[string]any {
	froms, tos, pubs := make([]any, len(ivs)), make([]any, len(ivs)), make([]any, len(ivs))
	var validTo int64
	for i, iv := range ivs {
		froms[i], tos[i], pubs[i] = iv.From, iv.To, iv.Pub
		validTo = max(validTo, iv.To)
	}
	return map[string]any{"froms": froms, "tos": tos, "pubs": pubs, "validTo": validTo, "normVersion": NormVersion}
}

func addTransformations(props map[string]any, tt []olevent.Transformation) {
	types, subs, mask, desc := make([]any, len(tt)), make([]any, len(tt)), make([]any, len(tt)), make([]any, len(tt))
	for i, t := range tt {
		types[i], subs[i], mask[i], desc[i] = t.Type, t.Subtype, t.Masking, t.Description
	}
	props["tTypes"], props["tSubtypes"], props["tMasking"], props["tDescriptions"] = types, subs, mask, desc
}

// indirectEdges derives INDIRECT_FEEDS (the facet's dataset-level dependencies), once per (input, output, job).
func indirectEdges(jobKey string, runs []jobRun) []indirectEdge {
	type pair struct{ In, Out string }
	type listing struct {
		ev Evidence
		tt []olevent.Transformation
	}
	lists := map[pair][]listing{}
	for i := range runs {
		r := &runs[i]
		for _, io := range r.IO {
			if io.Dir != graph.RelWrote || io.Cols == nil {
				continue
			}
			for _, d := range io.Cols.Dataset {
				p := pair{d.In, io.DS}
				lists[p] = append(lists[p], listing{Evidence{Start: r.Start, Lists: true, ListedAt: d.FirstAt, Pub: io.Pub}, d.TT})
			}
		}
	}
	pairs := make([]pair, 0, len(lists))
	for p := range lists {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].In+pairs[i].Out < pairs[j].In+pairs[j].Out })
	var out []indirectEdge
	for _, p := range pairs {
		var ev []Evidence
		subtypes := map[string]bool{}
		for _, l := range lists[p] {
			ev = append(ev, l.ev)
			for _, t := range l.tt {
				subtypes[t.Subtype] = true
			}
		}
		ev = append(ev, datasetClosers(runs, p.In, p.Out)...)
		ivs := Intervals(ev, nil)
		if len(ivs) == 0 {
			continue
		}
		props := intervalProps(ivs)
		props["jobKey"], props["outputKey"], props["subtypes"] = jobKey, p.Out, toAny(sortedKeys(subtypes))
		out = append(out, indirectEdge{From: p.In, To: p.Out, Props: props})
	}
	return out
}

func datasetClosers(runs []jobRun, in, out string) []Evidence {
	var ev []Evidence
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
				ev = append(ev, Evidence{Start: r.Start, CanClose: true, CloseAt: r.Ended})
			}
		}
	}
	return ev
}
