// Package canary checks the registered known paths (canaries.Canary: "from reaches to through job", dataset or
// field level, optionally with a transformation) by asking the lineage service, as a principal that sees
// everything, and records each outcome on the canary (ADR 0032). The trust signals count them (`canaries`
// figure and metric); a periodic Checker in `headwater serve` runs every --trust-canary-interval, and re-checks
// a canary after a projection batch touches a node its latest check saw (Touched; ADR 0034).
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

// RecheckDebounce is how long the checker waits after a projection batch touched a watched node before it
// re-checks the canaries concerned, so a burst of batches costs one re-check per canary.
const RecheckDebounce = 2 * time.Second

// MaxWatchedNodes bounds the node ids one canary's re-checks watch (the nodes its latest check's answer held,
// nearest first); a path longer than that is re-checked on the schedule only beyond them.
const MaxWatchedNodes = 4096

// Checker checks canaries.
type Checker struct {
	lineage Lineage
	catalog *catalog.Catalog
	store   Store
	clock   func() time.Time
	log     *slog.Logger
	watch   *watchSet
}

// NewChecker returns a checker; lin and cat must see everything (a policy that allows all).
func NewChecker(lin Lineage, cat *catalog.Catalog, store Store, clock func() time.Time, log *slog.Logger) *Checker {
	if clock == nil {
		clock = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Checker{lineage: lin, catalog: cat, store: store, clock: clock, log: log, watch: newWatchSet()}
}

// CheckAll checks every active canary once and records the outcomes; it returns how many passed and failed.
func (c *Checker) CheckAll(ctx context.Context) (passed, failed int, err error) {
	all, err := c.store.Active(ctx)
	if err != nil {
		return 0, 0, err
	}
	c.watch.keepOnly(all)
	for _, k := range all {
		ok, err := c.checkOne(ctx, k)
		if err != nil {
			return passed, failed, err
		}
		if ok {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed, nil
}

// checkOne checks one canary, records the outcome and watches the nodes its answer held.
func (c *Checker) checkOne(ctx context.Context, k canaries.Canary) (bool, error) {
	failure, seen, err := c.check(ctx, k)
	if err != nil {
		return false, err
	}
	if err := c.store.SetCheck(ctx, k.Name, c.clock(), failure == "", failure); err != nil {
		return false, err
	}
	c.watch.set(k.Name, seen)
	return failure == "", nil
}

// Run checks every canary every interval, and the canaries a projection batch concerned (Touched, Recheck)
// RecheckDebounce after it, until ctx ends (interval <= 0: never).
func (c *Checker) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	all := true
	for {
		if all {
			if _, _, err := c.CheckAll(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("canary check failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			all = true
		case <-c.watch.kick:
			all = false
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(RecheckDebounce):
			}
			if err := c.CheckPending(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("canary re-check failed", "err", err)
			}
		}
	}
}

// Touched is the projection's post-commit hook (the node keys a batch's transaction touched, as the cache
// generations are bumped): it marks the canaries whose latest check saw one of them for a re-check. In memory
// only, never blocking: a map lookup per key and kind.
func (c *Checker) Touched(keys []string) { c.watch.touched(keys) }

// Recheck marks one canary for a re-check (registered or replaced through this process).
func (c *Checker) Recheck(name string) { c.watch.mark(name) }

// CheckPending re-checks the active canaries marked by Touched or Recheck since the last call.
func (c *Checker) CheckPending(ctx context.Context) error {
	names := c.watch.takePending()
	if len(names) == 0 {
		return nil
	}
	all, err := c.store.Active(ctx)
	if err != nil {
		return err
	}
	for _, k := range all {
		if !names[k.Name] {
			continue
		}
		if _, err := c.checkOne(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// Check returns why the canary fails ("" when it passes); err only for store failures.
func (c *Checker) Check(ctx context.Context, k canaries.Canary) (string, error) {
	failure, _, err := c.check(ctx, k)
	return failure, err
}

// check is Check with the public ids of the nodes it saw (the end, the job, the answer's nodes and its edges'
// jobs), which the re-checks after projection batches watch. The walk runs even when the end or the job is not
// found, so that what would repair the canary (an alias on a dataset the walk reaches) is watched too.
func (c *Checker) check(ctx context.Context, k canaries.Canary) (string, []string, error) {
	target, failure, err := c.target(ctx, k)
	if err != nil {
		return "", nil, err
	}
	var seen []string
	if target != "" {
		seen = append(seen, target)
	}
	jobKey, jobFailure, err := c.job(ctx, k)
	if err != nil {
		return "", nil, err
	}
	if jobKey != "" {
		seen = append(seen, api.JobID(jobKey))
	}
	if failure == "" {
		failure = jobFailure
	}
	walkFailure, onPath, err := c.walk(ctx, k, target, jobKey)
	if err != nil {
		return "", nil, err
	}
	if failure == "" {
		failure = walkFailure
	}
	return failure, append(seen, onPath...), nil
}

// job is the key of the canary's job ("" with no job, or with the failure when it is not in the graph).
func (c *Checker) job(ctx context.Context, k canaries.Canary) (string, string, error) {
	if k.JobName == "" {
		return "", "", nil
	}
	j, err := c.catalog.FindJob(ctx, k.JobNamespace, k.JobName)
	if err != nil {
		failure, err := failOrErr(err, fmt.Sprintf("job %s %s is not in the graph", k.JobNamespace, k.JobName))
		return "", failure, err
	}
	return j.Key, "", nil
}

// walk asks the lineage downstream of the canary's start and says why it does not reach target through jobKey
// ("" when it does), with the ids of the nodes and edge jobs its pages held (at most MaxWatchedNodes).
func (c *Checker) walk(ctx context.Context, k canaries.Canary, target, jobKey string) (string, []string, error) {
	args := lineage.LineageArgs{Direction: api.Downstream, Depth: CheckDepth, Granularity: api.GranDataset, MaxNodes: CheckMaxNodes}
	if k.Field() {
		args.Granularity = api.GranField
		args.Start.Field = &api.FieldRef{Namespace: k.From.Namespace, Name: k.From.Name, Field: k.From.Field}
	} else {
		args.Start.Dataset = &api.DatasetRef{Namespace: k.From.Namespace, Name: k.From.Name}
	}
	var seen []string
	reached, through := false, false
	for range CheckMaxPages {
		g, err := c.lineage.Lineage(ctx, args)
		if err != nil {
			failure, err := failOrErr(err, fmt.Sprintf("%s %s is not in the graph", k.From.Namespace, k.From.Name))
			return failure, seen, err
		}
		seen = appendSeen(seen, g)
		for _, e := range g.Edges {
			if target == "" || e.To != target {
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
		return "", seen, nil
	case reached && jobKey != "":
		return fmt.Sprintf("%s is reached, but not through job %s %s%s", endText(k.To), k.JobNamespace, k.JobName,
			transformationText(k.Transformation)), seen, nil
	case reached:
		return fmt.Sprintf("%s is reached, but not%s", endText(k.To), transformationText(k.Transformation)), seen, nil
	}
	return fmt.Sprintf("%s does not reach %s within %d hops", endText(k.From), endText(k.To), CheckDepth), seen, nil
}

// appendSeen adds a page's node ids and its edges' job ids, up to MaxWatchedNodes.
func appendSeen(seen []string, g *api.LineageGraph) []string {
	for _, n := range g.Nodes {
		if len(seen) >= MaxWatchedNodes {
			return seen
		}
		seen = append(seen, n.GetID())
	}
	for _, e := range g.Edges {
		if len(seen) >= MaxWatchedNodes {
			return seen
		}
		if e.JobKey != "" {
			seen = append(seen, api.JobID(e.JobKey))
		}
	}
	return seen
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
