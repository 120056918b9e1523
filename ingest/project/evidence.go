package project

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/ordered"
)

// Latest evidence lives once on the Job (docs/adr/0035-write-what-changed.md): the properties of a lineage edge
// that change with every run but not in meaning (the latest listing run, its state, time, producer, job version,
// derivation and the last few event ids) are stored on the Job as ev<Name> (graph.JobEvidenceProp), taken from the job's latest
// OBSERVED edge. An edge keeps its own copy only while its evidence differs from the job's (its latest listing run
// is not the job's latest run, or that run listed it at another time or with other ids); a reader takes
// coalesce(edge value, job value), which is the edge's own evidence in both cases. The choice is a pure function
// of the derived edges, so any order of the same events stores the same graph.

// edgeEvidenceProps and columnEvidenceProps are the evidence properties of INPUT_TO / OUTPUT_TO and COLUMN_FEEDS.
var (
	edgeEvidenceProps   = graph.EdgeEvidenceProps
	columnEvidenceProps = graph.ColumnEvidenceProps
)

// jobEvidence picks the job's evidence from its OBSERVED edges: that of the edge with the latest listing (by
// lastObservedAt, then lastRunId), the first such in (direction, dataset) order. nil when the job has none.
func jobEvidence(edges []edge) map[string]any {
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
	ev := make(map[string]any, len(edgeEvidenceProps))
	for _, p := range edgeEvidenceProps {
		ev[p] = best[p]
	}
	return ev
}

// sharedEvidence is the stored form of a job's OBSERVED edges: the job's evidence (jobEvidence) and the edges,
// each without the evidence it shares with the job (withoutSharedEvidence).
func sharedEvidence(observed []edge) (map[string]any, []edge) {
	ev := jobEvidence(observed)
	out := make([]edge, len(observed))
	for i, e := range observed {
		e.Props = withoutSharedEvidence(e.Props, ev, edgeEvidenceProps)
		out[i] = e
	}
	return ev, out
}

// jobEvidenceRow is the Job properties for ev (all null when ev is nil).
func jobEvidenceRow(ev map[string]any) map[string]any {
	out := make(map[string]any, len(edgeEvidenceProps))
	for _, p := range edgeEvidenceProps {
		out[graph.JobEvidenceProp(p)] = ev[p]
	}
	return out
}

// withoutSharedEvidence returns a copy of props whose evidence properties (names) are null when every one of them
// equals the job's: the edge then reads them through the job. An edge whose evidence differs in any keeps all.
func withoutSharedEvidence(props, ev map[string]any, names []string) map[string]any {
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

// projHashProp is the relationship property holding propsHash of what the projector last wrote to it: a batch
// writes a derived relationship only when its hash differs (an unchanged one costs no statement row, no compare
// and no transaction-log bytes).
const projHashProp = "projHash"

// propsHash is a stable 64-bit digest of a relationship's derived properties (nulls included: a removed
// property is a change).
func propsHash(props map[string]any) int64 {
	var b []byte
	for _, k := range ordered.Keys(props) {
		b = append(append(b, k...), 0)
		b = appendValue(b, props[k])
		b = append(b, 1)
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return int64(h.Sum64() >> 1)
}

// appendValue appends an unambiguous encoding of a property value to b.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case int64:
		return binary.LittleEndian.AppendUint64(append(b, 'i'), uint64(x))
	case int:
		return appendValue(b, int64(x))
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		b = binary.LittleEndian.AppendUint32(append(b, 's'), uint32(len(x)))
		return append(b, x...)
	case []any:
		b = binary.LittleEndian.AppendUint32(append(b, '['), uint32(len(x)))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case []string:
		return appendValue(b, toAny(x))
	case map[string]any:
		b = binary.LittleEndian.AppendUint32(append(b, '{'), uint32(len(x)))
		for _, k := range ordered.Keys(x) {
			b = appendValue(b, k)
			b = appendValue(b, x[k])
		}
		return b
	default:
		return fmt.Appendf(append(b, '?'), "%T%v", v, v)
	}
}

// columnEvidenceOf is the job's evidence as a COLUMN_FEEDS carries it (nil when the job has none).
func columnEvidenceOf(ev map[string]any) map[string]any {
	if ev == nil {
		return nil
	}
	return map[string]any{"lastRunId": ev["lastRunId"], "lastObservedAt": ev["lastObservedAt"]}
}
