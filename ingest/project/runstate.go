package project

import (
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/fold"
)

// order is where the event sits in the canonical event order (fold.Order.Before).
func (r *rec) order() fold.Order {
	return fold.Order{Time: r.Time, Type: r.Type, Recv: r.Recv, ID: r.ID}
}

func sortEvents(evs []*rec) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].order().Before(evs[j].order()) })
}

// foldRun computes a run's state from its events (fold.FoldRun of what they say about the run).
func foldRun(key string, events []*rec) *fold.RunState {
	evs := make([]fold.RunEvent, len(events))
	for i, e := range events {
		evs[i] = runEventOf(e)
	}
	return fold.FoldRun(key, evs)
}

// runEventOf is the event as the run fold sees it: its datasets by resolved key ("" when not resolved).
func runEventOf(r *rec) fold.RunEvent {
	e := fold.RunEvent{Order: r.order(), Kind: r.Kind, Producer: r.Producer, Facets: r.RunFacets, Deleted: r.Deleted,
		Parent: runRefOf(r.Parent), Root: runRefOf(r.Root), NomStart: r.NomStart, NomEnd: r.NomEnd, ErrorMsg: r.ErrorMsg,
		Inputs: runDatasetsOf(r.Inputs), Outputs: runDatasetsOf(r.Outputs)}
	if j := r.Job; j != nil {
		e.Job = fold.RunJob{Key: j.Key, Dbt: j.DbtRole != "", ProcessingType: j.ProcessingType, DefHash: j.defHash(),
			Def: fold.JobDef{SQL: j.SQL, SourceCode: j.SourceCode, SourceLocation: j.SourceLocation}}
	}
	if r.Subject != nil {
		e.Subject = &fold.RunDataset{Key: resolvedKey(r.Subject.ID), Publication: r.Subject.Publication}
	}
	return e
}

func runRefOf(p *parentRec) *fold.RunRef {
	if p == nil {
		return nil
	}
	return &fold.RunRef{RunID: p.RunID, JobKey: p.JobKey}
}

func runDatasetsOf(ds []*dsRec) []fold.RunDataset {
	if len(ds) == 0 {
		return nil
	}
	out := make([]fold.RunDataset, len(ds))
	for i, d := range ds {
		out[i] = fold.RunDataset{Key: resolvedKey(d.ID), Version: d.Version, Scan: d.Scan, Publication: d.Publication,
			Facets: d.IOFacets, ColDataset: colInsOf(d.ColDataset)}
		if d.ColFields != nil {
			out[i].ColFields = make(map[string][]fold.ColIn, len(d.ColFields))
			for f, ins := range d.ColFields {
				out[i].ColFields[f] = colInsOf(ins)
			}
		}
	}
	return out
}

func colInsOf(ins []colInput) []fold.ColIn {
	if ins == nil {
		return nil
	}
	out := make([]fold.ColIn, len(ins))
	for i, in := range ins {
		out[i] = fold.ColIn{DS: resolvedKey(in.DS), Field: in.Field, TT: in.TT}
	}
	return out
}

// resolvedKey is the identifier's Dataset key, "" when it was not resolved.
func resolvedKey(id *ident) string {
	if !id.ok() {
		return ""
	}
	return id.Key
}

// encodeCols is a run's column lineage for one output as stored on its WROTE relationship (fold.DecodeCols).
func encodeCols(c *fold.RunCols) string {
	var d fold.ColsDoc
	for p, o := range c.Fields {
		d.Fields = append(d.Fields, fold.ColField{In: p.InKey, InField: p.InField, Out: p.OutField, FirstAt: o.FirstAt, TT: o.TT})
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
		d.Dataset = append(d.Dataset, fold.ColDep{In: k, FirstAt: o.FirstAt, TT: o.TT})
	}
	sort.Slice(d.Dataset, func(i, j int) bool { return d.Dataset[i].In < d.Dataset[j].In })
	b, _ := json.Marshal(d)
	return string(b)
}
