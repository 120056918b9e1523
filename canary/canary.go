// Package canary checks the registered known paths (canaries.Canary: "from reaches to through job", dataset or
// field level, optionally with a transformation) by asking the lineage service, as a principal that sees
// everything, and records each outcome on the canary (ADR 0032). The trust signals count them (`canaries`
// figure and metric); a periodic Checker in `headwater serve` runs every --trust-canary-interval.
//
// Invariants: a check reads only (lineage and catalog lookups); a canary passes when the lineage answer from its
// start contains an edge into its end (resolved by name now, through aliases and renames) through its job, with
// its transformation when it names one; a failure says which of those it did not find.
package canary

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/inventory/canaries"
	"github.com/headwater-data/headwater/lineage"
)

// Check bounds: the depth of the walk from a canary's start and the pages of it one check reads.
const (
	CheckDepth    = 10
	CheckMaxPages = 20
	CheckMaxNodes = 2000
)

// Lineage is what a check asks of the lineage service.
type Lineage interface {
	Lineage(ctx context.Context, a lineage.LineageArgs) (*api.LineageGraph, error)
}

// Store is where canaries are read and their outcomes written (canaries.Store).
type Store interface {
	Active(ctx context.Context) ([]canaries.Canary, error)
	SetCheck(ctx context.Context, name string, at time.Time, ok bool, failure string) error
}

// Checker checks canaries.
type Checker struct {
	lineage Lineage
	catalog *catalog.Catalog
	store   Store
	clock   func() time.Time
	log     *slog.Logger
}

// NewChecker returns a checker; lin and cat must see everything (a policy that allows all).
func NewChecker(lin Lineage, cat *catalog.Catalog, store Store, clock func() time.Time, log *slog.Logger) *Checker {
	if clock == nil {
		clock = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Checker{lineage: lin, catalog: cat, store: store, clock: clock, log: log}
}

// CheckAll checks every active canary once and records the outcomes; it returns how many passed and failed.
func (c *Checker) CheckAll(ctx context.Context) (passed, failed int, err error) {
	all, err := c.store.Active(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, k := range all {
		failure, err := c.Check(ctx, k)
		if err != nil {
			return passed, failed, err
		}
		if err := c.store.SetCheck(ctx, k.Name, c.clock(), failure == "", failure); err != nil {
			return passed, failed, err
		}
		if failure == "" {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed, nil
}

// Run checks every interval until ctx ends (interval <= 0: never).
func (c *Checker) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, _, err := c.CheckAll(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("canary check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Check returns why the canary fails ("" when it passes); err only for store failures.
func (c *Checker) Check(ctx context.Context, k canaries.Canary) (string, error) {
	target, failure, err := c.target(ctx, k)
	if failure != "" || err != nil {
		return failure, err
	}
	jobKey := ""
	if k.JobName != "" {
		j, err := c.catalog.FindJob(ctx, k.JobNamespace, k.JobName)
		if err != nil {
			return failOrErr(err, fmt.Sprintf("job %s %s is not in the graph", k.JobNamespace, k.JobName))
		}
		jobKey = j.Key
	}
	args := lineage.LineageArgs{Direction: api.Downstream, Depth: CheckDepth, Granularity: api.GranDataset, MaxNodes: CheckMaxNodes}
	if k.Field() {
		args.Granularity = api.GranField
		args.Start.Field = &api.FieldRef{Namespace: k.From.Namespace, Name: k.From.Name, Field: k.From.Field}
	} else {
		args.Start.Dataset = &api.DatasetRef{Namespace: k.From.Namespace, Name: k.From.Name}
	}
	reached, through := false, false
	for range CheckMaxPages {
		g, err := c.lineage.Lineage(ctx, args)
		if err != nil {
			return failOrErr(err, fmt.Sprintf("%s %s is not in the graph", k.From.Namespace, k.From.Name))
		}
		for _, e := range g.Edges {
			if e.To != target {
				continue
			}
			reached = true
			if (jobKey == "" || e.JobKey == jobKey) && hasTransformation(e, k.Transformation) {
				through = true
			}
		}
		if through || g.Cursor == nil {
			break
		}
		args.After = *g.Cursor
	}
	switch {
	case through:
		return "", nil
	case reached && jobKey != "":
		return fmt.Sprintf("%s is reached, but not through job %s %s%s", endText(k.To), k.JobNamespace, k.JobName,
			transformationText(k.Transformation)), nil
	case reached:
		return fmt.Sprintf("%s is reached, but not%s", endText(k.To), transformationText(k.Transformation)), nil
	}
	return fmt.Sprintf("%s does not reach %s within %d hops", endText(k.From), endText(k.To), CheckDepth), nil
}

// target is the public id of the canary's end, resolved by name now (through renames and aliases).
func (c *Checker) target(ctx context.Context, k canaries.Canary) (string, string, error) {
	if k.Field() {
		f, _, err := c.catalog.FindField(ctx, api.FieldRef{Namespace: k.To.Namespace, Name: k.To.Name, Field: k.To.Field},
			graph.Millis(c.clock()))
		if err != nil {
			failure, err := failOrErr(err, endText(k.To)+" is not in the graph")
			return "", failure, err
		}
		return api.FieldID(f.Key), "", nil
	}
	d, err := c.catalog.Dataset(ctx, k.To.Namespace, k.To.Name, nil)
	if err != nil {
		failure, err := failOrErr(err, endText(k.To)+" is not in the graph")
		return "", failure, err
	}
	return api.DatasetID(d.Key), "", nil
}

// failOrErr turns a not-found (or bad request) into the failure text, anything else into an error.
func failOrErr(err error, failure string) (string, error) {
	if errors.Is(err, api.ErrNotFound) || errors.Is(err, api.ErrBadRequest) {
		return failure, nil
	}
	return "", err
}

func hasTransformation(e *api.LineageEdge, typ string) bool {
	return typ == "" || slices.ContainsFunc(e.Transformations, func(t api.Transformation) bool { return string(t.Type) == typ })
}

func transformationText(typ string) string {
	if typ == "" {
		return ""
	}
	return " with a " + typ + " transformation"
}

func endText(e canaries.End) string {
	if e.Field != "" {
		return e.Namespace + " " + e.Name + "." + e.Field
	}
	return e.Namespace + " " + e.Name
}
