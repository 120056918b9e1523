// Package report writes load-test results: a JSON file (the record), a markdown table and PNG charts (latency
// by depth, by fan-out, throughput over time; load rate per phase). Every result carries the machine it ran on
// and the data shape (generator parameters and the counts read back from Neo4j).
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/headwater-data/headwater/loadtest/compare"
	"github.com/headwater-data/headwater/loadtest/drive"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/machine"
)

// Result kinds.
const (
	KindGen     = "gen"
	KindHistory = "history"
	KindIngest  = "ingest"
	KindQuery   = "query"
	KindCompare = "compare"
)

// Shape is the data a result ran on.
type Shape struct {
	Seed            uint64          `json:"seed"`
	Prefix          string          `json:"prefix"`
	Datasets        int             `json:"datasets"`
	Jobs            int             `json:"jobs"`
	Hubs            int             `json:"hubs"`
	MinHubConsumers int             `json:"minHubConsumers"`
	ColumnShare     float64         `json:"columnShare"`
	RunsPerDay      int             `json:"runsPerDay"`
	StagingShare    float64         `json:"stagingShare"`
	StreamingShare  float64         `json:"streamingShare"`
	Counts          *history.Counts `json:"neo4jCounts,omitempty"` // read back from Neo4j under the prefix
}

// ShapeOf describes a world (counts are added by the caller after reading them back).
func ShapeOf(w *gen.World) Shape {
	cons := w.Consumers()
	minHub := 0
	for i, h := range w.Hubs {
		if i == 0 || cons[h] < minHub {
			minHub = cons[h]
		}
	}
	c := w.Config
	return Shape{Seed: c.Seed, Prefix: c.Prefix, Datasets: len(w.Datasets), Jobs: len(w.Jobs), Hubs: len(w.Hubs),
		MinHubConsumers: minHub, ColumnShare: c.ColumnShare, RunsPerDay: c.RunsPerDay, StagingShare: c.StagingShare,
		StreamingShare: c.StreamingShare}
}

// Result is one load-test result file.
type Result struct {
	Kind      string              `json:"kind"`
	StartedAt time.Time           `json:"startedAt"`
	Machine   machine.Info        `json:"machine"`
	Shape     Shape               `json:"shape"`
	Flags     map[string]string   `json:"flags,omitempty"`
	Generated *gen.Stats          `json:"generated,omitempty"`
	History   *history.Result     `json:"history,omitempty"`
	Estimate  *history.Estimate   `json:"fullSizeEstimate,omitempty"` // the history load scaled to design size
	Ingest    *drive.IngestResult `json:"ingest,omitempty"`
	Query     *drive.QueryResult  `json:"query,omitempty"`
	Compare   *compare.Result     `json:"compare,omitempty"`
}

// Write stores the result as indented JSON.
func Write(path string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// Read loads a result file.
func Read(path string) (Result, error) {
	var r Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("read result: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("decode result %s: %w", path, err)
	}
	return r, nil
}
