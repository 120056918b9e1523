package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
)

// catalogCmd reads Iceberg REST catalogs (ADR 0039).
type catalogCmd struct {
	Sync catalogSyncCmd `cmd:"" help:"Read an Iceberg REST catalog: namespaces, tables, schemas by field id, snapshots (only --dry-run for now: prints what it sees, writes nothing)."`
}

type catalogSyncCmd struct {
	DryRun    bool          `help:"Print what the catalog holds and write nothing (required until the graph side lands; ADR 0039)." name:"dry-run"`
	Name      string        `help:"The catalog's name in Headwater." default:"iceberg" env:"HEADWATER_ICEBERG_NAME"`
	URI       string        `help:"The catalog's REST base URI (the one Iceberg clients are configured with)." default:"http://127.0.0.1:8281" env:"HEADWATER_ICEBERG_URI"`
	Warehouse string        `help:"Warehouse sent to GET /v1/config (Polaris, Lakekeeper and Unity pick the catalog by it)." env:"HEADWATER_ICEBERG_WAREHOUSE"`
	Token     string        `help:"Bearer token for the catalog." env:"HEADWATER_ICEBERG_TOKEN" secret:"true"`
	PageSize  int           `help:"Page size asked of the list endpoints." default:"1000"`
	Timeout   time.Duration `help:"Time for the whole scan." default:"10m"`
}

func (c catalogSyncCmd) Run(rc *runCtx) error {
	if !c.DryRun {
		return errors.New("catalog sync: only --dry-run is implemented; writing to the graph comes with the catalog projection (ADR 0039)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	client, err := icebergrest.NewClient(ctx, icebergrest.ClientConfig{URI: c.URI, Warehouse: c.Warehouse,
		Token: c.Token, PageSize: c.PageSize, HTTP: &http.Client{Timeout: icebergrest.DefaultTimeout}})
	if err != nil {
		return err
	}
	res, err := icebergsync.Scan(ctx, client, nil)
	if err != nil {
		return err
	}
	return icebergsync.WriteReport(rc.stdout, c.Name, res)
}
