// Package release answers the pre-release impact of a dbt candidate manifest (docs/declared-lineage.md, ADR
// 0056): for each change of the diff (ingest/declare.Diff) that something downstream can notice (a model removed
// or renamed, a declared column removed or retyped, dependencies changed), the datasets, fields and jobs
// downstream through declared and observed edges, direct and indirect, each with the evidence that supports it,
// the owners of what is affected and the gaps that limit the claim. It asks only the lineage service's lineage and
// impact queries and the catalog, as the caller: their permission checks run while expanding, so a report names
// and counts only what the caller may see. Markdown renders a report for a pull-request comment; Rules decide
// the CI outcome. Both are pure.
package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/lineage"
)

// Budgets of one report.
const (
	// MaxChanges bounds the changes assessed per report; more make the report partial (the diff lists them all).
	MaxChanges = 50
	// Depth is the downstream depth of each change's dataset and field walks.
	Depth = 5
	// MaxNodes is the node budget of each change's dataset walk (a walk that reaches it is truncated: partial).
	MaxNodes = 500
)

// Querier is the lineage service, as the caller (lineage.Service).
type Querier interface {
	Lineage(ctx context.Context, a lineage.LineageArgs) (*api.LineageGraph, error)
	Impact(ctx context.Context, ref api.FieldRef, depth *int, asOf *time.Time) (*api.ImpactReport, error)
}

// Jobs names jobs by key, only those the caller may see (catalog.Catalog).
type Jobs interface {
	JobsByKeys(ctx context.Context, keys []string) (map[string]*api.Job, error)
}

// Assessor builds reports.
type Assessor struct {
	q     Querier
	jobs  Jobs
	clock func() time.Time
}

// NewAssessor returns an assessor over the lineage service and the catalog.
func NewAssessor(q Querier, jobs Jobs, clock func() time.Time) *Assessor {
	return &Assessor{q: q, jobs: jobs, clock: clock}
}

// Input is what a report is of: the diff, the dataset namespace its relations are in, the owners the candidate
// names (meta.owner of a node, by relation) and its exposures (by consumer dataset name, ADR 0070).
type Input struct {
	Project, DatasetNamespace string
	Diff                      *api.ReleaseDiff
	Owners                    map[string]string
	Exposures                 map[string]api.AffectedExposure
}

// Assess answers the impact of in.Diff for the caller in ctx.
func (a *Assessor) Assess(ctx context.Context, in Input) (*api.ReleaseImpact, error) {
	now := a.clock().UTC()
	r := &api.ReleaseImpact{Project: in.Project, Diff: in.Diff, Changes: []*api.ReleaseChange{}, Owners: []string{}, AsOf: now}
	changes := Changes(in.Diff, in.DatasetNamespace)
	if len(changes) > MaxChanges {
		changes, r.Partial = changes[:MaxChanges], true
	}
	owners := map[string]bool{}
	for _, c := range changes {
		filtered, err := a.change(ctx, c, in, now)
		if err != nil {
			return nil, err
		}
		r.PermissionsFiltered = r.PermissionsFiltered || filtered
		r.Partial = r.Partial || c.Truncated
		for _, d := range c.Datasets {
			for _, o := range d.Owners {
				owners[o] = true
			}
		}
		r.Changes = append(r.Changes, c)
	}
	for o := range owners {
		r.Owners = append(r.Owners, o)
	}
	slices.Sort(r.Owners)
	return r, nil
}

// Changes lists the changes of a diff that something downstream can notice, in a stable order: removed models,
// renamed models whose relation changed, removed and retyped columns, nodes whose dependencies changed.
func Changes(d *api.ReleaseDiff, ns string) []*api.ReleaseChange {
	var out []*api.ReleaseChange
	add := func(k api.ReleaseChangeKind, uid, ds string, col *string, summary string) {
		out = append(out, &api.ReleaseChange{Kind: k, UniqueID: uid, Namespace: ns, Dataset: ds, Column: col, Summary: summary,
			Datasets: []*api.AffectedDataset{}, Fields: []*api.AffectedField{}, Jobs: []*api.AffectedJob{}, Exposures: []*api.AffectedExposure{},
			Gaps: []api.ReleaseGap{}})
	}
	for _, n := range d.Removed {
		add(api.ChangeModelRemoved, n.UniqueID, n.Dataset, nil, fmt.Sprintf("%s removed (its relation %s is no longer written)", n.UniqueID, n.Dataset))
	}
	for _, n := range d.Renamed {
		if n.FromDataset != n.ToDataset {
			add(api.ChangeModelRenamed, n.From, n.FromDataset, nil, fmt.Sprintf("%s renamed to %s (%s is written as %s; said by %s)",
				n.From, n.To, n.FromDataset, n.ToDataset, n.Source))
		}
	}
	for _, c := range d.Columns {
		col := c.Column
		switch c.Change {
		case api.DiffRemoved:
			add(api.ChangeColumnRemoved, c.UniqueID, c.Dataset, &col, fmt.Sprintf("column %s removed from %s", c.Column, c.Dataset))
		case api.DiffRetyped:
			add(api.ChangeColumnRetyped, c.UniqueID, c.Dataset, &col, fmt.Sprintf("column %s of %s retyped from %s to %s",
				c.Column, c.Dataset, deref(c.FromType), deref(c.ToType)))
		}
	}
	seen := map[string]bool{}
	for _, dep := range d.Dependencies {
		if seen[dep.UniqueID] {
			continue
		}
		seen[dep.UniqueID] = true
		var parts []string
		for _, x := range d.Dependencies {
			if x.UniqueID == dep.UniqueID {
				parts = append(parts, strings.ToLower(string(x.Change))+" "+x.Dependency)
			}
		}
		add(api.ChangeDependencyChanged, dep.UniqueID, dep.Dataset, nil, fmt.Sprintf("dependencies of %s changed: %s", dep.UniqueID, strings.Join(parts, ", ")))
	}
	return out
}

// change fills one change's impact; it reports whether any answer was permission-filtered.
func (a *Assessor) change(ctx context.Context, c *api.ReleaseChange, in Input, now time.Time) (bool, error) {
	g, err := a.q.Lineage(ctx, lineage.LineageArgs{Start: api.NodeRef{Dataset: &api.DatasetRef{Namespace: c.Namespace, Name: c.Dataset}},
		Direction: api.Downstream, Depth: Depth, Granularity: api.GranDataset, MaxNodes: MaxNodes})
	if errors.Is(err, api.ErrNotFound) {
		// absent or hidden alike: the same words either way
		c.Gaps = append(c.Gaps, api.ReleaseGap{Kind: api.GapNoColumnLineage,
			Message: fmt.Sprintf("%s has no lineage in the graph that you may see: nothing downstream can be claimed", c.Dataset)})
		return false, nil
	}
	if err != nil {
		return false, err
	}
	datasets, err := a.datasets(ctx, c, g, in, now)
	if err != nil {
		return false, err
	}
	c.Truncated = g.Truncated
	c.Gaps = gaps(c.Gaps, g.Gaps)
	filtered := g.PermissionsFiltered
	if c.Column == nil {
		return filtered, nil
	}
	depth := Depth
	rep, err := a.q.Impact(ctx, api.FieldRef{Namespace: c.Namespace, Name: c.Dataset, Field: *c.Column}, &depth, nil)
	if errors.Is(err, api.ErrNotFound) {
		c.Gaps = append(c.Gaps, api.ReleaseGap{Kind: api.GapNoColumnLineage,
			Message: fmt.Sprintf("no field %s of %s has been observed: no column-level impact can be claimed", *c.Column, c.Dataset)})
		return filtered, nil
	}
	if err != nil {
		return false, err
	}
	c.Truncated = c.Truncated || rep.Truncated
	c.Gaps = gaps(c.Gaps, rep.Gaps)
	if err := a.fields(ctx, c, rep, datasets, now); err != nil {
		return false, err
	}
	if len(c.Fields) == 0 && len(c.Datasets) > 0 && !hasGap(c.Gaps, api.GapNoColumnLineage) {
		c.Gaps = append(c.Gaps, api.ReleaseGap{Kind: api.GapNoColumnLineage, Message: fmt.Sprintf(
			"no column lineage from %s.%s: the %d datasets downstream of %s may read it", c.Dataset, *c.Column, len(c.Datasets), c.Dataset)})
	}
	return filtered || rep.PermissionsFiltered, nil
}

// datasets fills the change's datasets and jobs from the dataset walk and returns the walk's datasets by key.
func (a *Assessor) datasets(ctx context.Context, c *api.ReleaseChange, g *api.LineageGraph, in Input, now time.Time) (map[string]*api.Dataset, error) {
	byID, byKey := map[string]*api.Dataset{}, map[string]*api.Dataset{}
	root := ""
	for _, n := range g.Nodes {
		if d, ok := n.(*api.Dataset); ok {
			byID[d.ID], byKey[d.Key] = d, d
			if d.Name == c.Dataset || d.CurrentName == c.Dataset {
				root = d.ID
			}
		}
	}
	var jobKeys []string
	for _, e := range g.Edges {
		if e.JobKey != "" && !slices.Contains(jobKeys, e.JobKey) {
			jobKeys = append(jobKeys, e.JobKey)
		}
	}
	jobs, err := a.jobs.JobsByKeys(ctx, jobKeys)
	if err != nil {
		return nil, err
	}
	dist := distances(root, g.Edges)
	jobEdges := map[string][]*api.LineageEdge{}
	for id, d := range byID {
		k, ok := dist[id]
		if id == root || !ok {
			continue
		}
		var into []*api.LineageEdge
		ad := &api.AffectedDataset{ID: id, Namespace: d.Namespace, Name: d.Name, Direct: k == 1, Distance: k, Jobs: []string{}, Owners: []string{}}
		for _, e := range g.Edges {
			if e.To == id && dist[e.From] == k-1 && (e.From == root || dist[e.From] > 0) {
				into = append(into, e)
				if j := jobs[e.JobKey]; j != nil && !slices.Contains(ad.Jobs, j.Name) {
					ad.Jobs = append(ad.Jobs, j.Name)
				}
				if e.From == root && jobs[e.JobKey] != nil {
					jobEdges[e.JobKey] = append(jobEdges[e.JobKey], e)
				}
			}
		}
		ad.Evidence = Evidence(into, now)
		for _, o := range d.Owners {
			ad.Owners = append(ad.Owners, o.Name)
		}
		if o := in.Owners[d.Name]; o != "" && !slices.Contains(ad.Owners, o) {
			ad.Owners = append(ad.Owners, o)
		}
		slices.Sort(ad.Jobs)
		slices.Sort(ad.Owners)
		c.Datasets = append(c.Datasets, ad)
		if x, ok := in.Exposures[d.Name]; ok {
			x.Direct, x.Distance, x.Evidence = ad.Direct, ad.Distance, ad.Evidence
			c.Exposures = append(c.Exposures, &x)
		}
	}
	slices.SortFunc(c.Exposures, func(x, y *api.AffectedExposure) int {
		if x.Distance != y.Distance {
			return x.Distance - y.Distance
		}
		return strings.Compare(x.UniqueID, y.UniqueID)
	})
	slices.SortFunc(c.Datasets, func(x, y *api.AffectedDataset) int {
		if x.Distance != y.Distance {
			return x.Distance - y.Distance
		}
		return strings.Compare(x.Name, y.Name)
	})
	for _, k := range jobKeys {
		j := jobs[k]
		if j == nil {
			continue
		}
		var es []*api.LineageEdge
		for _, e := range g.Edges {
			if e.JobKey == k {
				es = append(es, e)
			}
		}
		c.Jobs = append(c.Jobs, &api.AffectedJob{ID: j.ID, Namespace: j.Namespace, Name: j.Name, Direct: len(jobEdges[k]) > 0, Evidence: Evidence(es, now)})
	}
	slices.SortFunc(c.Jobs, func(x, y *api.AffectedJob) int {
		if x.Direct != y.Direct {
			if x.Direct {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Name, y.Name)
	})
	return byKey, nil
}

// fields fills the change's fields from the impact report.
func (a *Assessor) fields(ctx context.Context, c *api.ReleaseChange, rep *api.ImpactReport, datasets map[string]*api.Dataset, now time.Time) error {
	var keys []string
	for _, f := range slices.Concat(rep.Direct, rep.Indirect) {
		for _, e := range f.Path {
			if e.JobKey != "" && !slices.Contains(keys, e.JobKey) {
				keys = append(keys, e.JobKey)
			}
		}
	}
	jobs, err := a.jobs.JobsByKeys(ctx, keys)
	if err != nil {
		return err
	}
	add := func(f *api.ImpactedField, direct bool) {
		af := &api.AffectedField{ID: f.Field.ID, Namespace: c.Namespace, Field: f.Field.Path, Type: f.Field.Type, Direct: direct, Distance: f.Distance}
		if d := datasets[f.Field.DatasetKey]; d != nil {
			af.Namespace, af.Dataset = d.Namespace, d.Name
		}
		if n := len(f.Path); n > 0 {
			last := f.Path[n-1]
			af.Evidence = Evidence([]*api.LineageEdge{last}, now)
			if j := jobs[last.JobKey]; j != nil {
				af.Job = j.Name
			}
		}
		c.Fields = append(c.Fields, af)
	}
	for _, f := range rep.Direct {
		add(f, true)
	}
	for _, f := range rep.Indirect {
		add(f, false)
	}
	slices.SortFunc(c.Fields, func(x, y *api.AffectedField) int {
		if x.Distance != y.Distance {
			return x.Distance - y.Distance
		}
		return strings.Compare(x.Dataset+"."+x.Field, y.Dataset+"."+y.Field)
	})
	for _, j := range rep.Jobs {
		if !slices.ContainsFunc(c.Jobs, func(x *api.AffectedJob) bool { return x.ID == j.ID }) {
			c.Jobs = append(c.Jobs, &api.AffectedJob{ID: j.ID, Namespace: j.Namespace, Name: j.Name, Evidence: &api.ImpactEvidence{Label: "column lineage"}})
		}
	}
	return nil
}

// distances are the hops from root over edges (BFS).
func distances(root string, edges []*api.LineageEdge) map[string]int {
	out := map[string]int{root: 0}
	for frontier := []string{root}; len(frontier) > 0; {
		var next []string
		for _, e := range edges {
			if _, seen := out[e.To]; !seen && slices.Contains(frontier, e.From) {
				out[e.To] = out[e.From] + 1
				next = append(next, e.To)
			}
		}
		frontier = next
	}
	return out
}

// Evidence labels what a set of edges shows: declared only, observed N days ago, or observed N days ago and
// declared (N whole days before now, of the latest observation).
func Evidence(edges []*api.LineageEdge, now time.Time) *api.ImpactEvidence {
	ev := &api.ImpactEvidence{}
	var last time.Time
	for _, e := range edges {
		for _, x := range e.Evidence {
			switch x.Kind {
			case api.Declared:
				ev.Declared = true
			case api.Observed:
				ev.Observed = true
				if x.ObservedAt.After(last) {
					last = x.ObservedAt
				}
			}
		}
	}
	if ev.Observed {
		days := max(0, int(now.Sub(last)/(24*time.Hour)))
		ev.LastObservedAt, ev.DaysAgo = &last, &days
		ev.Label = fmt.Sprintf("observed %d days ago", days)
		if ev.Declared {
			ev.Label += " and declared"
		}
	} else if ev.Declared {
		ev.Label = "declared only"
	} else {
		ev.Label = "no evidence"
	}
	return ev
}

func gaps(into []api.ReleaseGap, from []api.Gap) []api.ReleaseGap {
	for _, g := range from {
		rg := api.ReleaseGap{Kind: g.Kind, Message: g.Message}
		if !slices.Contains(into, rg) {
			into = append(into, rg)
		}
	}
	return into
}

func hasGap(gs []api.ReleaseGap, k api.GapKind) bool {
	return slices.ContainsFunc(gs, func(g api.ReleaseGap) bool { return g.Kind == k })
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
