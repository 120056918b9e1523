package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/icebergsync/schedule"
	"github.com/headwater-data/headwater/ingest/normalize"
)

// catalogCmd reads Iceberg REST catalogs (ADR 0039).
type catalogCmd struct {
	Sync catalogSyncCmd `cmd:"" help:"Sync an Iceberg REST catalog into the graph: tables by uuid, renames and drops, schemas by field id, snapshots as dataset versions (ADR 0041); --dry-run prints what it sees and writes nothing."`
}

type catalogSyncCmd struct {
	DryRun    bool          `help:"Print what the catalog holds and write nothing (ADR 0039)." name:"dry-run"`
	Name      string        `help:"The catalog's name in Headwater." default:"iceberg" env:"HEADWATER_ICEBERG_NAME"`
	URI       string        `help:"The catalog's REST base URI (the one Iceberg clients are configured with)." default:"http://127.0.0.1:8281" env:"HEADWATER_ICEBERG_URI"`
	Warehouse string        `help:"Warehouse sent to GET /v1/config (Polaris, Lakekeeper and Unity pick the catalog by it)." env:"HEADWATER_ICEBERG_WAREHOUSE"`
	Token     string        `help:"Bearer token for the catalog." env:"HEADWATER_ICEBERG_TOKEN" secret:"true"`
	PageSize  int           `help:"Page size asked of the list endpoints." default:"1000"`
	Timeout   time.Duration `help:"Time for the whole scan." default:"10m"`
	Namespace string        `help:"The OpenLineage namespace the catalog's tables are named in (default: --uri, canonical); set it when Headwater reaches the catalog at another address than the engines name it by." env:"HEADWATER_ICEBERG_NAMESPACE"`
	Root      string        `help:"Sync only this namespace (dotted) and what lies below it; tables outside it are neither read nor dropped." env:"HEADWATER_ICEBERG_ROOT"`
	// Where the sync's events go: a gateway, under the sync's own service token (ADR 0041).
	Gateway      string       `help:"The Headwater gateway the sync publishes its events to." default:"http://127.0.0.1:8080" env:"HEADWATER_ICEBERG_GATEWAY"`
	GatewayToken string       `help:"The sync's API token: a service principal with PRODUCE on the catalog's namespace and its iceberg://<name> uuid namespace." env:"HEADWATER_ICEBERG_GATEWAY_TOKEN" secret:"true"`
	Neo4j        graph.Config `embed:"" prefix:"neo4j-"`
	// Several catalogs: the same file `serve --catalogs-file` schedules (ADR 0049).
	CatalogsFile string `name:"catalogs-file" help:"YAML catalogs file: sync each of its catalogs once, in order (the file serve --catalogs-file schedules); --uri, --name, --warehouse, --namespace, --root and --token are then the file's." env:"HEADWATER_CATALOGS_FILE"`
}

func (c catalogSyncCmd) Run(rc *runCtx) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	if c.CatalogsFile != "" {
		return c.syncFile(ctx, rc)
	}
	client, err := icebergrest.NewClient(ctx, icebergrest.ClientConfig{URI: c.URI, Warehouse: c.Warehouse,
		Token: c.Token, PageSize: c.PageSize, HTTP: &http.Client{Timeout: icebergrest.DefaultTimeout}})
	if err != nil {
		return err
	}
	if c.DryRun {
		res, err := icebergsync.ScanUnder(ctx, client, rootOf(c.Root), nil)
		if err != nil {
			return err
		}
		return icebergsync.WriteReport(rc.stdout, c.Name, res)
	}
	return c.sync(ctx, rc, client)
}

// sync writes the catalog into the graph: it reads what earlier syncs recorded from Neo4j and publishes its
// events through the gateway (ADR 0041).
func (c catalogSyncCmd) sync(ctx context.Context, rc *runCtx, client *icebergrest.Client) error {
	if c.GatewayToken == "" {
		return errors.New("catalog sync: --gateway-token (HEADWATER_ICEBERG_GATEWAY_TOKEN) is required to write; use --dry-run to only look")
	}
	if err := c.Neo4j.Validate(); err != nil {
		return err
	}
	raw := c.Namespace
	if raw == "" {
		raw = c.URI
	}
	ns, err := normalize.CanonicalNamespace(raw)
	if err != nil {
		return fmt.Errorf("catalog sync: %q (--namespace, else --uri) is not a namespace Headwater can name tables in: %w", raw, err)
	}
	store, err := graph.Open(ctx, c.Neo4j)
	if err != nil {
		return err
	}
	defer closeLogged(rc.log, "neo4j", func() error { return store.Close(context.Background()) })
	pub := icebergsync.GatewayPublisher{URL: c.Gateway, Token: c.GatewayToken, HTTP: &http.Client{Timeout: icebergrest.DefaultTimeout}}
	rep, err := icebergsync.Sync(ctx, client, icebergsync.Catalog{Name: c.Name, Namespace: ns}, icebergsync.GraphState{Store: store},
		pub, icebergsync.Options{Root: rootOf(c.Root)})
	_, _ = fmt.Fprintf(rc.stdout, "catalog %s: %d tables, %d unchanged, %d new, %d changed, %d renamed, %d dropped, %d snapshots; %d events written\n",
		c.Name, rep.Tables, rep.Unchanged, rep.New, rep.Changed, rep.Renamed, rep.Dropped, rep.Snapshots, len(rep.EventIDs))
	for _, w := range rep.Warnings {
		_, _ = fmt.Fprintf(rc.stdout, "warning: %s\n", w)
	}
	for _, id := range rep.EventIDs {
		_, _ = fmt.Fprintf(rc.stdout, "event %s\n", id)
	}
	return err
}

// syncFile syncs every catalog of the catalogs file once, in order, and stops at the first that fails.
func (c catalogSyncCmd) syncFile(ctx context.Context, rc *runCtx) error {
	f, err := schedule.LoadFile(c.CatalogsFile)
	if err != nil {
		return err
	}
	for _, cat := range f.Catalogs {
		client, err := cat.Client(ctx, os.Getenv)
		if err != nil {
			return fmt.Errorf("catalog %s: %w", cat.Name, err)
		}
		one := c
		one.Name, one.URI, one.Namespace, one.Root = cat.Name, cat.URI, cat.Namespace, cat.Root
		if c.DryRun {
			res, err := icebergsync.ScanUnder(ctx, client, cat.RootNamespace(), nil)
			if err != nil {
				return fmt.Errorf("catalog %s: %w", cat.Name, err)
			}
			if err := icebergsync.WriteReport(rc.stdout, cat.Name, res); err != nil {
				return err
			}
			continue
		}
		if err := one.sync(ctx, rc, client); err != nil {
			return err
		}
	}
	return nil
}

func rootOf(dotted string) icebergrest.Namespace {
	if dotted == "" {
		return nil
	}
	return icebergrest.Namespace(strings.Split(dotted, "."))
}

// catalogScheduler builds the scheduled syncs of the catalogs file (none when path is empty): they publish
// in-process through gw as each catalog's service principal (ADR 0049).
func catalogScheduler(path string, store *graph.Store, gw *gateway.Gateway, log *slog.Logger, reg prometheus.Registerer) (*schedule.Scheduler, error) {
	f := schedule.File{LeaseTTL: schedule.DefaultLeaseTTL}
	if path != "" {
		var err error
		if f, err = schedule.LoadFile(path); err != nil {
			return nil, err
		}
		for i, c := range f.Catalogs {
			if c.Principal == "" {
				return nil, fmt.Errorf("catalogs file %s: catalogs[%d] (%s).principal: required for the scheduled sync (the service principal it publishes as)", path, i, c.Name)
			}
		}
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s:%d:%d", host, os.Getpid(), time.Now().UnixNano())
	syncer := schedule.Syncer{State: icebergsync.GraphState{Store: store}, Env: os.Getenv,
		Publisher: func(c schedule.Catalog, h schedule.Held) icebergsync.Publisher {
			return icebergsync.SubmitPublisher{Sub: gw, Principal: authz.Principal{Subject: c.Principal, Kind: "service"},
				Fence: schedule.LeaseFence{Leases: schedule.Neo4jLeases{Store: store}, Held: h}}
		}}
	return schedule.New(f, schedule.Neo4jLeases{Store: store}, syncer.Sync, holder, schedule.NewMetrics(reg), log, time.Now), nil
}
