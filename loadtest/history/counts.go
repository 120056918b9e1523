package history

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// Counts is the data size under one prefix, read back from Neo4j.
type Counts struct {
	Datasets      int64 `json:"datasets"`
	DatasetNames  int64 `json:"datasetNames"`
	Fields        int64 `json:"fields"`
	Jobs          int64 `json:"jobs"`
	JobVersions   int64 `json:"jobVersions"`
	Runs          int64 `json:"runs"`
	InputTo       int64 `json:"inputTo"`
	OutputTo      int64 `json:"outputTo"`
	Reads         int64 `json:"reads"`
	Wrote         int64 `json:"wrote"`
	ColumnFeeds   int64 `json:"columnFeeds"`
	IndirectFeeds int64 `json:"indirectFeeds"`
	Events        int64 `json:"events"`
	MaxConsumers  int64 `json:"maxConsumers"` // largest INPUT_TO out-degree of one dataset (the biggest hub)
}

const countDatasets = `MATCH (d:Dataset) WHERE d.namespace IN $ns AND d.name IS NOT NULL
RETURN count(d) AS datasets,
  sum(COUNT { (d)<-[:NAMES]-() }) AS names,
  sum(COUNT { (d)-[:HAS_FIELD]->() }) AS fields,
  sum(COUNT { (d)-[:INPUT_TO]->() }) AS inputTo,
  max(COUNT { (d)-[:INPUT_TO]->() }) AS maxConsumers,
  sum(COUNT { (d)<-[:OUTPUT_TO]-() }) AS outputTo,
  sum(COUNT { (d)<-[:READ]-() }) AS reads,
  sum(COUNT { (d)<-[:WROTE]-() }) AS wrote,
  sum(COUNT { (d)-[:INDIRECT_FEEDS]->() }) AS indirectFeeds,
  sum(COUNT { (d)-[:HAS_FIELD]->()-[:COLUMN_FEEDS]->() }) AS columnFeeds`

const countJobs = `MATCH (j:Job) WHERE j.namespace IN $ns AND j.name IS NOT NULL
RETURN count(j) AS jobs, sum(COUNT { (j)-[:HAS_VERSION]->() }) AS versions,
  sum(COUNT { (j)<-[:OF_JOB]-() }) AS runs,
  sum(COUNT { (j)<-[:OF_JOB]-()<-[:OF_RUN]-(:Event) }) AS events`

// ReadCounts reads the data size under a prefix (dataset and job namespaces the generator uses).
func ReadCounts(ctx context.Context, s *graph.Store, prefix string) (Counts, error) {
	var c Counts
	d, err := single(ctx, s, countDatasets, gen.DatasetNamespaces(prefix))
	if err != nil {
		return c, err
	}
	j, err := single(ctx, s, countJobs, gen.JobNamespaces(prefix))
	if err != nil {
		return c, err
	}
	c = Counts{Datasets: d["datasets"], DatasetNames: d["names"], Fields: d["fields"], InputTo: d["inputTo"],
		MaxConsumers: d["maxConsumers"], OutputTo: d["outputTo"], Reads: d["reads"], Wrote: d["wrote"],
		IndirectFeeds: d["indirectFeeds"], ColumnFeeds: d["columnFeeds"], Jobs: j["jobs"],
		JobVersions: j["versions"], Runs: j["runs"], Events: j["events"]}
	return c, nil
}

func single(ctx context.Context, s *graph.Store, cypher string, ns []string) (map[string]int64, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.Driver, cypher, map[string]any{"ns": ns}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	out := map[string]int64{}
	if len(res.Records) == 0 {
		return out, nil
	}
	rec := res.Records[0]
	for i, k := range rec.Keys {
		if v, ok := rec.Values[i].(int64); ok {
			out[k] = v
		}
	}
	return out, nil
}
