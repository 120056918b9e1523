package mutation

import (
	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
)

func badRequest(format string, args ...any) error { return api.BadRequest(format, args...) }

// nextBlocks is the block list after adding b (a block already on the same target: BAD_REQUEST) or removing the block on
// b's target (none in force there: BAD_REQUEST).
func nextBlocks(cur []graph.BlockInterval, b graph.BlockInterval, add bool) ([]graph.BlockInterval, error) {
	out := make([]graph.BlockInterval, 0, len(cur)+1)
	found := false
	for _, c := range cur {
		if c.Key() == b.Key() {
			found = true
			continue
		}
		out = append(out, c)
	}
	switch {
	case !add && !found:
		return nil, badRequest("target: no block is in force on field %s%s", b.Field, edgeText(b.Edge))
	case !add:
		return out, nil
	case found: // the projector keeps an unchanged block's interval (who, why): a new reason needs a new block
		return nil, badRequest("target: a block is already in force on field %s%s; unblock it first to change its reason", b.Field, edgeText(b.Edge))
	}
	if len(out) >= MaxBlocksPerDataset {
		return nil, badRequest("target: the dataset has %d blocks; at most %d", len(out), MaxBlocksPerDataset)
	}
	return append(out, b), nil
}

func edgeText(e *graph.BlockEdge) string {
	if e == nil {
		return ""
	}
	return " from " + e.Namespace + " " + e.Name + " " + e.Field + " through job " + e.JobNamespace + " " + e.JobName
}

// wireBlocks is the block facet's list (never null: an empty list removes every block). by is informational:
// the projector records the event's principal (ADR 0067 amendment).
func wireBlocks(bs []graph.BlockInterval) []map[string]any {
	out := make([]map[string]any, 0, len(bs))
	for _, b := range bs {
		m := map[string]any{"field": b.Field, "by": b.By, "reason": b.Reason}
		if e := b.Edge; e != nil {
			m["edge"] = map[string]any{"job": map[string]string{"namespace": e.JobNamespace, "name": e.JobName},
				"from": map[string]string{"namespace": e.Namespace, "name": e.Name, "field": e.Field}}
		}
		out = append(out, m)
	}
	return out
}

// blockTimes is the latest event time of the dataset's block history (0 for none).
func blockTimes(h []graph.BlockInterval) int64 {
	return latestTime(h, func(iv graph.BlockInterval) (int64, int64) { return iv.ValidFrom, iv.ValidTo })
}
