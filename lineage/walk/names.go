package walk

import (
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/permcheck"
)

// gate and batch are the permission checks of the walk (package permcheck): one policy call per hop.
type (
	gate  = permcheck.Gate
	batch = permcheck.Batch
)

func newBatch() *batch { return permcheck.NewBatch() }

// Names are a node's identities: now and at the query's asOf (for a field, its dataset's).
type Names struct {
	Current, AsOf graph.NameRef
}

// candidates names a node under its current identity and, when it differs, its asOf identity.
func candidates(kind authz.NodeKind, key string, n Names) []authz.Candidate {
	return permcheck.Candidates(kind, key, n.Current, n.AsOf)
}

// DatasetNames are a dataset row's identities now and at the row's asOf.
func DatasetNames(d graph.DatasetRow) Names {
	return Names{Current: graph.NameRef{Namespace: d.CurrentNS, Name: d.CurrentName},
		AsOf: graph.NameRef{Namespace: d.Namespace, Name: d.Name}}
}

// AuthzKind is the permission model's kind of a hop kind.
func AuthzKind(k HopKind) authz.NodeKind {
	switch k {
	case HopField:
		return authz.KindField
	case HopJob:
		return authz.KindJob
	}
	return authz.KindDataset
}
