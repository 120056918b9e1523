package fold

import (
	"github.com/headwater-data/headwater/graph"
)

// FieldHist is one history of a field: from its (re)creation to the schema that omitted it or the drop. Read
// histories come from observations on read (dsObs.R) and exist only for paths no owner ever reported.
type FieldHist struct {
	Path, Type, Description, FieldID string
	From, To                         int64
	Read                             bool `json:",omitempty"`
	// Names are the history's paths over time when a rename kept its stable field id (projection version 5,
	// ADR 0041): every name with the time it took effect, the first at From; Path is the last. Empty when the
	// field was never renamed.
	Names []FieldName `json:",omitempty"`
}

// FieldName is one name of a renamed field history: the path from F on.
type FieldName struct {
	P string `json:"p"`
	F int64  `json:"f"`
}

// Key is the stable key of this history: of the path it started under (a rename keeps the node).
func (h *FieldHist) Key(datasetKey string) string {
	return graph.FieldKey(datasetKey, h.keyPath(), h.From)
}

func (h *FieldHist) keyPath() string {
	if len(h.Names) > 0 {
		return h.Names[0].P
	}
	return h.Path
}

// PathAt is the history's path at t (its first before it started).
func (h *FieldHist) PathAt(t int64) string {
	p := h.keyPath()
	for _, n := range h.Names {
		if n.F <= t {
			p = n.P
		}
	}
	return p
}

// Named reports whether the history ever had the path.
func (h *FieldHist) Named(path string) bool {
	if h.Path == path {
		return true
	}
	for _, n := range h.Names {
		if n.P == path {
			return true
		}
	}
	return false
}

// rename continues the history under a new path from t.
func (h *FieldHist) Rename(path string, t int64) {
	if len(h.Names) == 0 {
		h.Names = []FieldName{{P: h.Path, F: h.From}}
	}
	h.Names = append(h.Names, FieldName{P: path, F: t})
	h.Path = path
}

// FieldAt picks the history of path that is valid at t; else the latest one that started before t; else the
// earliest. It returns nil when the dataset never had the path.
func FieldAt(hists []*FieldHist, path string, t int64) *FieldHist {
	var before, first *FieldHist
	for _, h := range hists {
		if !h.Named(path) {
			continue
		}
		if h.From <= t && t < h.To && h.PathAt(t) == path {
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
