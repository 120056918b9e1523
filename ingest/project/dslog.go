package project

import (
	"fmt"

	"github.com/headwater-data/headwater/ingest/fold"
)

// A dataset's observation log is sealed as it grows (fold.DatasetLog.Seal): the oldest schema and mention
// observations move to an immutable DatasetLogChunk node, the field fold up to the cut is kept on the state
// (fold.LogBase), and a late observation restores the chunks from the one holding its time on
// (restoreLate, fold.DatasetLog.Restore). The fold is ingest/fold's; this file keeps the limits, the chunks'
// keys and their stored encoding. See docs/adr/0015-projection-without-history-growth.md.
const (
	dsLogHotMax  = 512 // schema and mention observations a dataset's state holds before the oldest are sealed
	dsLogHotKeep = 256 // how many of the newest stay in the state after sealing, so slightly late events fold fast
)

// chunkKey is the DatasetLogChunk key of a dataset's seq-th chunk.
func chunkKey(datasetKey string, seq int) string { return fmt.Sprintf("%s#log%d", datasetKey, seq) }

// seal moves the oldest schema and mention observations into a new chunk when the log holds too many; it returns
// nil when nothing was sealed.
func (st *dsState) seal() *fold.LogChunk { return st.Seal(dsLogHotMax, dsLogHotKeep) }

func encodeChunk(c *fold.LogChunk) ([]byte, error) {
	b, err := packState(c)
	if err != nil {
		return nil, fmt.Errorf("encode dataset log chunk: %w", err)
	}
	return b, nil
}

func decodeChunk(v any) (fold.LogChunk, error) {
	var c fold.LogChunk
	if ok, err := unpackState(v, &c); err != nil || !ok {
		return c, fmt.Errorf("dataset log chunk: unreadable (%v)", err)
	}
	return c, nil
}
