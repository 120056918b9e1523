package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"unicode"

	"github.com/alecthomas/kong"
	"gopkg.in/yaml.v3"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/obs"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// cli is the whole command line. Precedence: flags > HEADWATER_* environment > YAML file (--config) > defaults.
type cli struct {
	Config kong.ConfigFlag `help:"YAML configuration file (flags and HEADWATER_* variables override it)." env:"HEADWATER_CONFIG" type:"existingfile"`
	Log    obs.LogConfig   `embed:"" prefix:"log-"`

	Serve     serveCmd     `cmd:"" help:"Serve the ingestion gateway and the GraphQL API (and run the consumer in-process unless --consumer=false)."`
	Ingest    ingestCmd    `cmd:"" help:"Run the Kafka consumer that projects events into Neo4j."`
	Migrate   migrateCmd   `cmd:"" help:"Create or upgrade the Neo4j schema (constraints and indexes); idempotent."`
	Replay    replayCmd    `cmd:"" help:"Rebuild the projection from the raw-event archive into an empty database."`
	Upgrade   upgradeCmd   `cmd:"" help:"Upgrade a graph written by an earlier projection version in place, then replay the archive (stop consumers first)."`
	Redrive   redriveCmd   `cmd:"" help:"Send quarantined events back through projection after a fix (idempotent)."`
	Token     tokenCmd     `cmd:"" help:"Create or revoke API tokens."`
	Inventory inventoryCmd `cmd:"" help:"Register expected-job inventories with a running headwater (docs/trust.md)."`
	Declare   declareCmd   `cmd:"" help:"Declare lineage with a running headwater (dbt manifests; docs/declared-lineage.md)."`
	Canary    canaryCmd    `cmd:"" help:"Register or retire canaries (known paths) with a running headwater (docs/trust.md)."`
	Catalog   catalogCmd   `cmd:"" help:"Read Iceberg REST catalogs (catalog sync --dry-run; ADR 0039)."`
	Version   versionCmd   `cmd:"" help:"Print the version."`
}

// runCtx is what every command receives.
type runCtx struct {
	log    *slog.Logger
	stdout io.Writer
	kctx   *kong.Context
}

func run(args []string, stdout, stderr io.Writer) error {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("headwater"),
		kong.Description("Headwater: OpenLineage ingestion, a temporal lineage graph, and a GraphQL lineage API."),
		kong.Writers(stdout, stderr),
		kong.Configuration(yamlResolver),
		kong.UsageOnError(),
	)
	if err != nil {
		return err
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return err
	}
	log := obs.NewLogger(c.Log, stderr)
	rc := &runCtx{log: log, stdout: stdout, kctx: kctx}
	if kctx.Command() != "version" {
		logEffectiveConfig(log, kctx)
	}
	return kctx.Run(rc)
}

// logEffectiveConfig logs every flag's effective value once, with secrets redacted.
func logEffectiveConfig(log *slog.Logger, k *kong.Context) {
	attrs := []any{"command", k.Command(), "version", version}
	for _, f := range k.Flags() {
		if f.Name == "help" || f.Name == "config" {
			continue
		}
		attrs = append(attrs, f.Name, obs.RedactedValue(f.Name, k.FlagValue(f)))
	}
	log.Info("effective configuration", attrs...)
}

// yamlResolver reads the YAML configuration file. Nested keys join with "-" and camelCase becomes kebab-case,
// so `neo4j: {maxPoolSize: 10}` sets --neo4j-max-pool-size.
func yamlResolver(r io.Reader) (kong.Resolver, error) {
	var doc map[string]any
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("configuration file: %w", err)
	}
	flat := map[string]any{}
	flatten("", doc, flat)
	b, _ := json.Marshal(flat)
	file, err := kong.JSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	// kong applies resolvers after environment variables; a set HEADWATER_* variable must beat the file.
	return kong.ResolverFunc(func(ctx *kong.Context, parent *kong.Path, flag *kong.Flag) (any, error) {
		for _, env := range flag.Envs {
			if _, set := os.LookupEnv(env); set {
				return nil, nil
			}
		}
		return file.Resolve(ctx, parent, flag)
	}), nil
}

func flatten(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok || (prefix != "" && isStringMap(prefix)) {
		out[strings.ReplaceAll(prefix, "-", "_")] = v
		return
	}
	for k, sub := range m {
		name := kebab(k)
		if prefix != "" {
			name = prefix + "-" + name
		}
		flatten(name, sub, out)
	}
}

// isStringMap names the settings whose YAML values are maps (kept whole, not flattened).
func isStringMap(name string) bool {
	return strings.HasSuffix(name, "external-topics") || strings.HasSuffix(name, "environments")
}

func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

type versionCmd struct{}

func (versionCmd) Run(rc *runCtx) error {
	_, err := fmt.Fprintf(rc.stdout, "headwater %s (graph schema %d)\n", version, graph.SchemaVersion())
	return err
}
