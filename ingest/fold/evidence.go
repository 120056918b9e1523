package fold

import (
	"maps"
	"reflect"

	"github.com/headwater-data/headwater/graph"
)

// Latest evidence lives once on the Job (docs/adr/0035-write-what-changed.md): the properties of a lineage edge
// that change with every run but not in meaning (the latest listing run, its state, time, producer, job version,
// derivation and the last few event ids) are stored on the Job as ev<Name> (graph.JobEvidenceProp), taken from the job's latest
// OBSERVED edge. An edge keeps its own copy only while its evidence differs from the job's (its latest listing run
// is not the job's latest run, or that run listed it at another time or with other ids); a reader takes
// coalesce(edge value, job value), which is the edge's own evidence in both cases. The choice is a pure function
// of the derived edges, so any order of the same events stores the same graph.

// EdgeEvidenceProps and columnEvidenceProps are the evidence properties of INPUT_TO / OUTPUT_TO and COLUMN_FEEDS.
var (
	EdgeEvidenceProps   = graph.EdgeEvidenceProps
	ColumnEvidenceProps = graph.ColumnEvidenceProps
)

// jobEvidence picks the job's evidence from its OBSERVED edges: that of the edge with the latest listing (by
// lastObservedAt, then lastRunId), the first such in (direction, dataset) order. nil when the job has none.
func jobEvidence(edges []Edge) map[string]any {
	var best map[string]any
	for _, e := range edges {
		if e.Kind != graph.KindObserved {
			continue
		}
		t, r := asInt(e.Props["lastObservedAt"]), asStr(e.Props["lastRunId"])
		if best == nil || t > asInt(best["lastObservedAt"]) || (t == asInt(best["lastObservedAt"]) &&
			r > asStr(best["lastRunId"])) {
			best = e.Props
		}
	}
	if best == nil {
		return nil
	}
	ev := make(map[string]any, len(EdgeEvidenceProps))
	for _, p := range EdgeEvidenceProps {
		ev[p] = best[p]
	}
	return ev
}

// SharedEvidence is the stored form of a job's OBSERVED edges: the job's evidence (jobEvidence) and the edges,
// each without the evidence it shares with the job (withoutSharedEvidence).
func SharedEvidence(observed []Edge) (map[string]any, []Edge) {
	ev := jobEvidence(observed)
	out := make([]Edge, len(observed))
	for i, e := range observed {
		e.Props = WithoutSharedEvidence(e.Props, ev, EdgeEvidenceProps)
		out[i] = e
	}
	return ev, out
}

// JobEvidenceRow is the Job properties for ev (all null when ev is nil).
func JobEvidenceRow(ev map[string]any) map[string]any {
	out := make(map[string]any, len(EdgeEvidenceProps))
	for _, p := range EdgeEvidenceProps {
		out[graph.JobEvidenceProp(p)] = ev[p]
	}
	return out
}

// WithoutSharedEvidence returns a copy of props whose evidence properties (names) are null when every one of them
// equals the job's: the edge then reads them through the job. An edge whose evidence differs in any keeps all.
func WithoutSharedEvidence(props, ev map[string]any, names []string) map[string]any {
	if ev == nil {
		return props
	}
	for _, p := range names {
		if !sameValue(props[p], ev[p]) {
			return props
		}
	}
	out := maps.Clone(props)
	for _, p := range names {
		out[p] = nil
	}
	return out
}

func sameValue(a, b any) bool {
	if ai, ok := a.(int64); ok {
		bi, ok := b.(int64)
		return ok && ai == bi
	}
	if as, ok := a.(string); ok {
		bs, ok := b.(string)
		return ok && as == bs
	}
	return reflect.DeepEqual(a, b)
}

// ColumnEvidenceOf is the job's evidence as a COLUMN_FEEDS carries it (nil when the job has none).
func ColumnEvidenceOf(ev map[string]any) map[string]any {
	if ev == nil {
		return nil
	}
	return map[string]any{"lastRunId": ev["lastRunId"], "lastObservedAt": ev["lastObservedAt"]}
}
