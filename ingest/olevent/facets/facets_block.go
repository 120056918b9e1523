package facets

import (
	"github.com/headwater-data/headwater/ingest/olevent"
)

// MaxBlocks bounds one headwater_governance_block facet's list (a dataset's blocks, ADR 0067).
const MaxBlocks = 1000

// wireBlocks is the headwater_governance_block dataset facet (ADR 0067): the dataset's full list of explicit
// blocks; an empty list removes every block.
type wireBlocks struct {
	Blocks []wireBlock `json:"blocks"`
}

type wireBlock struct {
	Field string `json:"field"`
	Edge  *struct {
		Job struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"job"`
		From struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Field     string `json:"field"`
		} `json:"from"`
	} `json:"edge"`
	By     string `json:"by"`
	Reason string `json:"reason"`
}

func checkBlocks(b *wireBlocks) *problem {
	if len(b.Blocks) > MaxBlocks {
		return bad("blocks", olevent.RuleMaxLength, "blocks lists %d blocks; at most %d", len(b.Blocks), MaxBlocks)
	}
	for i, bl := range b.Blocks {
		p := idx("blocks", i)
		pr := firstProblem(need(p, "field", bl.Field), need(p, "reason", bl.Reason))
		if pr == nil && bl.Edge != nil {
			e := JoinPath(p, "edge")
			pr = firstProblem(need(e, "job.namespace", bl.Edge.Job.Namespace), need(e, "job.name", bl.Edge.Job.Name),
				need(e, "from.namespace", bl.Edge.From.Namespace), need(e, "from.name", bl.Edge.From.Name),
				need(e, "from.field", bl.Edge.From.Field))
		}
		if pr != nil {
			return pr
		}
	}
	return nil
}

func (b *wireBlocks) blocks() []olevent.Block {
	out := make([]olevent.Block, 0, len(b.Blocks))
	for _, bl := range b.Blocks {
		ob := olevent.Block{Field: bl.Field, By: bl.By, Reason: bl.Reason}
		if e := bl.Edge; e != nil {
			ob.Edge = &olevent.BlockEdge{JobNamespace: e.Job.Namespace, JobName: e.Job.Name,
				From: olevent.InputField{Namespace: e.From.Namespace, Name: e.From.Name, Field: e.From.Field}}
		}
		out = append(out, ob)
	}
	return out
}
