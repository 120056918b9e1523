package project

import (
	"fmt"

	"github.com/headwater-data/headwater/ingest/fold"
)

// storedCheckpointEvery is how far (event time) a job's checkpoint advances before a copy is kept as a
// JobCheckpoint node. A batch that changes a run starting before the job's checkpoint folds from the latest copy
// at or before that run's start: a late run costs about the runs of this much time plus its lateness, instead of
// every run the job ever had. Copies after a late run's start are deleted (they lack it).
const storedCheckpointEvery = int64(60 * 60 * 1000)

// storedCheckpointHorizon bounds the copies kept per job: those more than this (event time) before the newest are
// deleted, so a job keeps at most about a day's worth (24 copies); a run later than that folds the job in full.
const storedCheckpointHorizon = int64(24 * 60 * 60 * 1000)

func encodeCheckpoint(ck *fold.Checkpoint) ([]byte, error) {
	b, err := packState(ck)
	if err != nil {
		return nil, fmt.Errorf("encode job checkpoint: %w", err)
	}
	return b, nil
}

func decodeCheckpoint(v any) *fold.Checkpoint {
	var ck fold.Checkpoint
	if ok, err := unpackState(v, &ck); !ok || err != nil || ck.Subjects == nil {
		return nil
	}
	return &ck
}
