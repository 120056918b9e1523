package graph

import (
	"encoding/json"
	"sort"
)

// BlockInterval is one stretch of time an explicit governance block was in force on a dataset
// (Dataset.blockHistory, projection version 7, docs/adr/0067-governance-tags-and-blocks-by-mutation.md): on the
// dataset's field Field, or with Edge only across the column edge into Field from Edge's upstream field through
// Edge's job. By is the principal whose event set it, Reason its why, EventID that event; [ValidFrom, ValidTo) by
// event time, ValidTo OpenEnd while it is in force.
type BlockInterval struct {
	Field     string     `json:"f"`
	Edge      *BlockEdge `json:"x,omitempty"`
	By        string     `json:"b"`
	Reason    string     `json:"r"`
	ValidFrom int64      `json:"vf"`
	ValidTo   int64      `json:"vt"`
	EventID   string     `json:"e,omitempty"`
}

// BlockEdge is the column edge a block names, canonicalised as event identities are: the job (namespace, name
// and its key) and the upstream field (dataset namespace, name, field path).
type BlockEdge struct {
	JobNamespace string `json:"jn"`
	JobName      string `json:"j"`
	JobKey       string `json:"jk"`
	Namespace    string `json:"n"`
	Name         string `json:"d"`
	Field        string `json:"p"`
}

// Key identifies a block within its dataset: the field and, for an edge block, the edge.
func (b BlockInterval) Key() string {
	if b.Edge == nil {
		return b.Field
	}
	return b.Field + "\x00" + b.Edge.JobKey + "\x00" + b.Edge.Namespace + "\x00" + b.Edge.Name + "\x00" + b.Edge.Field
}

// ParseBlockHistory decodes a stored blockHistory (nil for none or an unreadable one).
func ParseBlockHistory(s string) []BlockInterval {
	if s == "" {
		return nil
	}
	var out []BlockInterval
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// BlocksAt are the dataset's blocks in force at t, by field then edge.
func (r DatasetRow) BlocksAt(t int64) []BlockInterval {
	var out []BlockInterval
	for _, iv := range r.BlockHistory {
		if iv.ValidFrom <= t && t < iv.ValidTo {
			out = append(out, iv)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}
