package project

import (
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/internal/ordered"
)

// declaredColumnEdges derives the DECLARED COLUMN_FEEDS into dataset key from its lineage-facet observations:
// a mapping's interval opens at a facet that states it and closes at a later facet that omits it. Fields are
// resolved to the history valid at the declaration time. jobKey is "" (declared without a job).
func declaredColumnEdges(key string, log []fold.Obs, hists map[string][]*fold.FieldHist) []fold.ColEdge {
	type target struct{ from, to string }
	var decls []fold.Obs
	for _, o := range log {
		if o.Kind == fold.ObsDecl {
			decls = append(decls, o)
		}
	}
	lists := map[target][]fold.Sighting{}
	latest := map[target]fold.DeclField{}
	latestAt := map[target]int64{}
	for _, o := range decls {
		for _, f := range o.DeclFields {
			in, out := fold.FieldAt(hists[f.In], f.InField, o.T), fold.FieldAt(hists[key], f.Out, o.T)
			if in == nil || out == nil {
				continue
			}
			tg := target{in.Key(f.In), out.Key(key)}
			lists[tg] = append(lists[tg], fold.Sighting{Start: o.T, Lists: true, ListedAt: o.T, Pub: graph.PubPublished})
			if o.T >= latestAt[tg] {
				latest[tg], latestAt[tg] = f, o.T
			}
		}
	}
	targets := make([]target, 0, len(lists))
	for tg := range lists {
		targets = append(targets, tg)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].from+targets[i].to < targets[j].from+targets[j].to })
	var out []fold.ColEdge
	for _, tg := range targets {
		f := latest[tg]
		ev := append([]fold.Sighting(nil), lists[tg]...)
		for _, o := range decls {
			if !declares(o, f) {
				ev = append(ev, fold.Sighting{Start: o.T, CanClose: true, CloseAt: o.T})
			}
		}
		ivs := fold.Intervals(ev, nil)
		if len(ivs) == 0 {
			continue
		}
		props := graph.IntervalProps(ivs)
		props["jobKey"], props["kind"], props["lastRunId"], props["lastObservedAt"] = "", graph.KindDeclared, "", latestAt[tg]
		fold.AddTransformations(props, f.TT)
		out = append(out, fold.ColEdge{From: tg.from, To: tg.to, Props: props})
	}
	return out
}

// declares tells whether the lineage-facet observation o declares the mapping f.
func declares(o fold.Obs, f fold.DeclField) bool {
	for _, d := range o.DeclFields {
		if d.In == f.In && d.InField == f.InField && d.Out == f.Out {
			return true
		}
	}
	return false
}

// projectDeclaredColumns recomputes the DECLARED COLUMN_FEEDS of the datasets whose lineage facet changed.
func (w *txWriter) projectDeclaredColumns(logs map[string][]fold.Obs) error {
	if len(logs) == 0 {
		return nil
	}
	involved := map[string]bool{}
	for k, log := range logs {
		involved[k] = true
		for _, o := range log {
			for _, f := range o.DeclFields {
				involved[f.In] = true
			}
		}
	}
	hists, err := w.loadFieldHists(ordered.Keys(involved))
	if err != nil {
		return err
	}
	var edges []fold.ColEdge
	var outs []any
	for _, k := range ordered.Keys(boolKeys(logs)) {
		edges = append(edges, declaredColumnEdges(k, logs[k], hists)...)
		outs = append(outs, map[string]any{"job": "", "out": k})
	}
	_, err = w.writeColumnEdges(outs, edges, nil)
	return err
}

func boolKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// loadFieldHists reads the Field histories of datasets.
func (w *txWriter) loadFieldHists(keys []string) (map[string][]*fold.FieldHist, error) {
	out, err := w.run(`UNWIND $ds AS k
		MATCH (:Dataset {key: k})-[:HAS_FIELD]->(f:Field)
		RETURN k, f.path AS path, f.validFrom AS f, f.validTo AS t, f.paths AS ps, f.pathFroms AS pf`, map[string]any{"ds": toAny(keys)})
	if err != nil {
		return nil, err
	}
	hists := map[string][]*fold.FieldHist{}
	for _, row := range out {
		m := row.AsMap()
		k := asStr(m["k"])
		hists[k] = append(hists[k], &fold.FieldHist{Path: asStr(m["path"]), From: asInt(m["f"]), To: asInt(m["t"]),
			Names: namesFrom(m["ps"], m["pf"])})
	}
	return hists, nil
}
