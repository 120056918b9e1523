package main

import (
	"context"
	"time"

	"github.com/headwater-data/headwater/graph"
)

type migrateCmd struct {
	Neo4j graph.Config `embed:"" prefix:"neo4j-"`
}

func (m migrateCmd) Validate() error { return m.Neo4j.Validate() }

func (m migrateCmd) Run(rc *runCtx) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	store, err := graph.Open(ctx, m.Neo4j)
	if err != nil {
		return err
	}
	defer closeLogged(rc.log, "neo4j", func() error { return store.Close(context.Background()) })
	from, to, err := store.Migrate(ctx)
	if err != nil {
		return err
	}
	rc.log.Info("graph schema migrated", "from", from, "to", to)
	return nil
}
