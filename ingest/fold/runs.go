package fold

import (
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// MaxEventIDs bounds the "last few" event ids kept on relationships and unresolved records.
const MaxEventIDs = 5

func IsTerminal(t string) bool {
	return t == olevent.TypeComplete || t == olevent.TypeAbort || t == olevent.TypeFail
}

func LastFew(ids []string) []string {
	if len(ids) > MaxEventIDs {
		return ids[len(ids)-MaxEventIDs:]
	}
	return ids
}

// RunPub is a run's evidence state for one dataset: a COMPLETE batch run (or a reporting streaming run)
// publishes unless headwater_publication withholds; FAIL/ABORT attempt; anything else is pending.
func RunPub(state string, streaming bool, facet string) string {
	switch {
	case state == olevent.TypeComplete || (streaming && !IsTerminal(state)):
		if facet == graph.PubWithheld {
			return graph.PubWithheld
		}
		return graph.PubPublished
	case state == olevent.TypeFail || state == olevent.TypeAbort:
		return graph.PubAttempted
	default:
		return graph.PubPending
	}
}
