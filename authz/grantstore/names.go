package grantstore

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz/grantpolicy"
	"github.com/headwater-data/headwater/graph"
)

// GraphNames resolves node keys (jobs, datasets, fields) to their current namespace and name in one read; a
// field resolves to its dataset's name, since fields inherit their dataset's grants.
type GraphNames struct{ Store *graph.Store }

var _ grantpolicy.NameResolver = GraphNames{}

const cypherNames = `UNWIND $keys AS k
OPTIONAL MATCH (j:Job {key: k})
OPTIONAL MATCH (d:Dataset {key: k})
OPTIONAL MATCH (f:Field {key: k})
OPTIONAL MATCH (fd:Dataset {key: f.datasetKey})
WITH k, coalesce(j.namespace, d.namespace, fd.namespace) AS ns, coalesce(j.name, d.name, fd.name) AS name
WHERE ns IS NOT NULL
RETURN k, ns, name`

// Names implements NameResolver.
func (g GraphNames) Names(ctx context.Context, keys []string) (map[string]grantpolicy.NodeName, error) {
	res, err := neo4j.ExecuteQuery(ctx, g.Store.Driver, cypherNames, map[string]any{"keys": keys},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(g.Store.Database),
		neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("resolve %d node names: %w", len(keys), err)
	}
	out := make(map[string]grantpolicy.NodeName, len(res.Records))
	for _, r := range res.Records {
		out[str(r, "k")] = grantpolicy.NodeName{Namespace: str(r, "ns"), Name: str(r, "name")}
	}
	return out, nil
}
