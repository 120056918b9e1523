package project

import (
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// fieldHistoriesFrom is the dataset's field histories: fold.FieldHistories from its sealed base (nil: none).
func fieldHistoriesFrom(base *dsBase, log []fold.Obs, schemas map[string][]olevent.SchemaField) []*fold.FieldHist {
	return fold.FieldHistories(base.fields(), log, schemas)
}

// repeatsLatestSchema reports whether a batch's change can leave the dataset's field histories as they are
// without folding the log again: every observation in it is a schema observation, later than every foldable
// observation in the log, of exactly the schema of the latest one (which is itself a schema observation). Applying
// the schema that is already in force, with nothing in between, opens and closes nothing (applySchema), so the
// fold over the log with the change equals the fold without it. The common case: a job's next run reports the
// schema it reported last time.
func repeatsLatestSchema(st *dsState, c *dsChange) bool {
	if len(c.obs) == 0 {
		return false
	}
	last := fold.LatestFoldable(st.Log)
	if last == nil || last.Kind != fold.ObsSchema || st.Schemas[last.Hash] == nil {
		return false
	}
	for _, o := range c.obs {
		if o.Kind != fold.ObsSchema || o.T <= last.T {
			return false
		}
		if o.SchemaKey() != last.Hash {
			return false
		}
		// After an owner's schema S the read layer is closed and the owner layer holds exactly S: a reader's S
		// opens read histories only for paths the owners reported, which are left out. After a reader's S an
		// owner's S may open owner histories: not a repeat.
		if last.R && !o.R {
			return false
		}
	}
	return true
}
