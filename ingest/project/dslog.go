package project

import (
	"fmt"
	"math"
	"sort"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// A dataset's observation log (dsState.Log) would grow with every run that reads or writes the dataset, and every
// batch touching it decodes, folds and rewrites the whole log: O(history) per event, and a hub read by a thousand
// jobs a day would carry a year of observations on its node. So the schema and mention observations (the bulk)
// are sealed: once the log holds more than dsLogHotMax of them, the oldest, all up to a cut time T, move to an
// immutable DatasetLogChunk node, and the field-history fold up to T is kept on the state (dsBase), so later
// observations fold from there. Lifecycle and declaration observations (rare) stay in the log.
//
// Sealing never changes a result: the fold from the base over the rest equals the fold over everything. An event
// that arrives late, with an observation at or before T, restores the chunks from the one holding its time on
// (each chunk keeps the base it started from) into the log, so the cost of a late event is proportional to how
// late it is, not to the dataset's history. See docs/adr/0015-projection-without-history-growth.md.
const (
	dsLogHotMax  = 512 // schema and mention observations a dataset's state holds before the oldest are sealed
	dsLogHotKeep = 256 // how many of the newest stay in the state after sealing, so slightly late events fold fast
)

// dsBase is the sealed part of a dataset's log: the field histories after folding every observation at or before
// T, and how many chunks hold the sealed observations.
type dsBase struct {
	T     int64            `json:"t"`
	Seq   int              `json:"n"`
	Hists []fold.FieldHist `json:"h,omitempty"`
}

// dsChunk is one sealed stretch of a dataset's log: the schema and mention observations in (From, To], the
// schemas they reference, and the base the stretch was folded from (nil for the first).
type dsChunk struct {
	Seq     int                              `json:"n"`
	From    int64                            `json:"from"`
	To      int64                            `json:"to"`
	Base    *dsBase                          `json:"base,omitempty"`
	Obs     []fold.Obs                       `json:"obs"`
	Schemas map[string][]olevent.SchemaField `json:"schemas,omitempty"`
}

// chunkKey is the DatasetLogChunk key of a dataset's seq-th chunk.
func chunkKey(datasetKey string, seq int) string { return fmt.Sprintf("%s#log%d", datasetKey, seq) }

// fields is the base as the field fold continues from it (nil: no base).
func (b *dsBase) fields() *fold.FieldBase {
	if b == nil {
		return nil
	}
	return &fold.FieldBase{T: b.T, Hists: b.Hists}
}

// lateFor returns the earliest time of the change's foldable observations when it is at or before the state's
// sealed base (the chunks from there on must be restored first), and false otherwise.
func (st *dsState) lateFor(c *dsChange) (int64, bool) {
	if st.Base == nil {
		return 0, false
	}
	t, late := int64(math.MaxInt64), false
	for _, o := range c.obs {
		if fold.Foldable(o) && o.T <= st.Base.T {
			t, late = min(t, o.T), true
		}
	}
	return t, late
}

// restore puts sealed chunks (sorted by Seq, the last one the newest) back into the log; the base becomes the one
// the first of them started from.
func (st *dsState) restore(chunks []dsChunk) {
	if len(chunks) == 0 {
		return
	}
	for _, c := range chunks {
		st.Log = append(st.Log, c.Obs...)
		for h, f := range c.Schemas {
			if st.Schemas == nil {
				st.Schemas = map[string][]olevent.SchemaField{}
			}
			st.Schemas[h] = f
		}
	}
	st.Base = chunks[0].Base
}

// seal moves the oldest schema and mention observations into a new chunk when the log holds too many; it returns
// nil when nothing was sealed.
func (st *dsState) seal() *dsChunk { return st.sealAt(dsLogHotMax, dsLogHotKeep) }

func (st *dsState) sealAt(hotMax, keep int) *dsChunk {
	var hot []fold.Obs
	for _, o := range st.Log {
		if fold.Sealable(o) {
			hot = append(hot, o)
		}
	}
	if len(hot) <= hotMax {
		return nil
	}
	sort.SliceStable(hot, func(i, j int) bool { return fold.ObsLess(hot[i], hot[j]) })
	cut := hot[len(hot)-keep-1].T
	var upTo, sealed, kept []fold.Obs
	for _, o := range st.Log {
		switch {
		case o.T > cut:
			kept = append(kept, o)
		case fold.Sealable(o):
			sealed, upTo = append(sealed, o), append(upTo, o)
		default:
			kept, upTo = append(kept, o), append(upTo, o)
		}
	}
	c := &dsChunk{From: math.MinInt64, To: cut, Base: st.Base, Obs: sealed, Schemas: map[string][]olevent.SchemaField{}}
	next := &dsBase{T: cut, Seq: 1}
	if st.Base != nil {
		c.From, next.Seq = st.Base.T, st.Base.Seq+1
	}
	c.Seq = next.Seq
	for _, h := range fold.FoldFields(st.Base.fields(), upTo, st.Schemas) {
		next.Hists = append(next.Hists, *h)
	}
	for _, o := range sealed {
		if o.Kind == fold.ObsSchema {
			c.Schemas[o.Hash] = st.Schemas[o.Hash]
		}
	}
	st.Log, st.Base = kept, next
	st.pruneSchemas()
	return c
}

// pruneSchemas drops the schemas no observation in the log references.
func (st *dsState) pruneSchemas() {
	used := map[string]bool{}
	for _, o := range st.Log {
		if o.Kind == fold.ObsSchema {
			used[o.Hash] = true
		}
	}
	for h := range st.Schemas {
		if !used[h] {
			delete(st.Schemas, h)
		}
	}
}

func encodeChunk(c *dsChunk) ([]byte, error) {
	b, err := packState(c)
	if err != nil {
		return nil, fmt.Errorf("encode dataset log chunk: %w", err)
	}
	return b, nil
}

func decodeChunk(v any) (dsChunk, error) {
	var c dsChunk
	if ok, err := unpackState(v, &c); err != nil || !ok {
		return c, fmt.Errorf("dataset log chunk: unreadable (%v)", err)
	}
	return c, nil
}
