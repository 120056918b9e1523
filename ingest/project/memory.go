package project

import "github.com/headwater-data/headwater/ingest/foldstate"

// MemoryBounds bounds the projector's in-memory caches by their estimated resident bytes (memsize.go); zero
// fields take the defaults (foldstate.DefaultMaxBytes, JobStateMaxBytes, RecentEventsMaxBytes). The consumer's
// --consumer-fold-state-mib, --consumer-job-state-mib and --consumer-recent-events-mib set them
// (docs/adr/0046-memory-bounds-by-bytes.md, docs/adr/0079-job-state-saved-write-behind.md).
type MemoryBounds struct {
	FoldStateBytes    int64 // the dataset fold state (ingest/foldstate)
	JobStateBytes     int64 // the job fold state (jobfold.go)
	RecentEventsBytes int64 // the recent committed events (recent.go)
}

// SetMemoryBounds applies the bounds; entries beyond them go with the caches' next additions (a dirty fold
// state once saved).
func (p *Projector) SetMemoryBounds(b MemoryBounds) {
	if b.FoldStateBytes <= 0 {
		b.FoldStateBytes = foldstate.DefaultMaxBytes
	}
	if b.JobStateBytes <= 0 {
		b.JobStateBytes = JobStateMaxBytes
	}
	if b.RecentEventsBytes <= 0 {
		b.RecentEventsBytes = RecentEventsMaxBytes
	}
	p.fold.cache.SetMaxBytes(b.FoldStateBytes)
	p.jobs.cache.SetMaxBytes(b.JobStateBytes)
	p.recent.setMaxBytes(b.RecentEventsBytes)
}
