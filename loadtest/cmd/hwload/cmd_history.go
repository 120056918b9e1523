package main

import (
	"fmt"
	"time"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/gen"
	"github.com/headwater-data/headwater/loadtest/history"
	"github.com/headwater-data/headwater/loadtest/report"
)

// Neo4jFlags connect to Neo4j.
type Neo4jFlags struct {
	Neo4jURI      string `help:"Neo4j Bolt URI." default:"bolt://127.0.0.1:7687" env:"HEADWATER_NEO4J_URI"`
	Neo4jUser     string `help:"Neo4j user (empty when auth is disabled)." default:"" env:"HEADWATER_NEO4J_USER"`
	Neo4jPassword string `help:"Neo4j password." default:"" env:"HEADWATER_NEO4J_PASSWORD"`
	Neo4jDatabase string `help:"Neo4j database." default:"neo4j" env:"HEADWATER_NEO4J_DATABASE"`
	Migrate       bool   `help:"Apply graph migrations before loading (idempotent)." default:"true" negatable:""`
}

func (f Neo4jFlags) open(e *env, pool int) (*graph.Store, error) {
	s, err := graph.Open(e.ctx, graph.Config{URI: f.Neo4jURI, User: f.Neo4jUser, Password: f.Neo4jPassword,
		Database: f.Neo4jDatabase, MaxPoolSize: pool, ConnectWait: 30 * time.Second, QueryTimeout: 10 * time.Minute})
	if err != nil {
		return nil, err
	}
	if f.Migrate {
		if _, _, err := s.Migrate(e.ctx); err != nil {
			_ = s.Close(e.ctx)
			return nil, err
		}
	}
	return s, nil
}

// HistoryCmd bulk-loads a world's history.
type HistoryCmd struct {
	World       WorldFlags  `embed:""`
	Neo4j       Neo4jFlags  `embed:""`
	Output      OutputFlags `embed:""`
	HistoryDays int         `help:"Days of compacted edge intervals." default:"365"`
	RunDays     int         `help:"Days of run detail (Run, READ, WROTE)." default:"30"`
	BatchRows   int         `help:"Approximate rows (nodes + relationships) per transaction." default:"10000"`
	Writers     int         `help:"Parallel write transactions." default:"4"`
	End         string      `help:"End of the history (RFC 3339); empty: now." default:""`
	PIITags     bool        `help:"Write the PII field tags of source datasets (the governance benchmark's world; docs/loadtest.md)." name:"pii-tags"`
}

// Run loads and writes the result with the counts read back and a full-size estimate.
func (c *HistoryCmd) Run(e *env) error {
	end := e.now().UTC().Truncate(time.Second)
	if c.End != "" {
		t, err := time.Parse(time.RFC3339, c.End)
		if err != nil {
			return fmt.Errorf("--end: %w", err)
		}
		end = t
	}
	w, err := c.World.world(end.Add(-time.Duration(c.RunDays) * 24 * time.Hour))
	if err != nil {
		return err
	}
	store, err := c.Neo4j.open(e, c.Writers+2)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close(e.ctx) }()
	cfg := history.Config{World: w, HistoryDays: c.HistoryDays, RunDays: c.RunDays, BatchRows: c.BatchRows,
		Writers: c.Writers, End: end, PIITags: c.PIITags}
	l, err := history.NewLoader(store, cfg, e.log, e.now)
	if err != nil {
		return err
	}
	started := e.now()
	res, err := l.Load(e.ctx)
	if err != nil {
		return err
	}
	est := history.EstimateAt(res, cfg, gen.DefaultDatasets, int64(history.DefaultRunDays)*gen.DefaultRunsPerDay)
	e.log.Info("history loaded", "rows", res.Rows, "elapsed", res.Elapsed.Round(time.Millisecond),
		"rowsPerSec", int64(res.RowsPerSec), "fullSizeEstimate", est.Duration.Round(time.Second))
	shape := report.ShapeOf(w)
	shape.Counts = &res.Counts
	return c.Output.finish(e, report.Result{Kind: report.KindHistory, StartedAt: started, Shape: shape,
		History: &res, Estimate: &est})
}
