package resolvers

import (
	"time"

	"github.com/headwater-data/headwater/lineage"
)

// effectiveArgs are the arguments of effectiveTags and sensitivity: asOf defaults to the instant the node was
// asked at (as Dataset.fields does).
func effectiveArgs(nodeAsOf time.Time, asOf *time.Time, depth *int, influence *bool) lineage.EffectiveArgs {
	t := nodeAsOf
	if asOf != nil {
		t = *asOf
	}
	return lineage.EffectiveArgs{AsOf: t, Depth: depth, Influence: deref(influence)}
}
