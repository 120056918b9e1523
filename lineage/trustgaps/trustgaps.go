// Package trustgaps computes the trust gaps of one lineage or impact answer (ADR 0032): JOB_NOT_REPORTING for
// expected writers of the answer's datasets that did not report within their schedule, PRODUCER_STALE for quiet
// producers of the answer's jobs, and the answer's coverage, counted only over what the caller may see. The
// lineage service adds them outside its results tier (they depend on the clock and the inventory, not on the graph
// generations the cache validates).
package trustgaps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/catalog"
	"github.com/headwater-data/headwater/internal/seal"
	"github.com/headwater-data/headwater/internal/ttlcache"
	"github.com/headwater-data/headwater/trust"
	"github.com/headwater-data/headwater/trust/gapsource"
	"github.com/headwater-data/headwater/trust/rules"
)

// Source is what the gaps ask of the trust signals (gapsource.Source): the expected jobs that list datasets as
// outputs, with their status now, filtered to the caller; the sentence about one; and the producers of jobs with
// their health now.
type Source interface {
	ExpectedWriters(ctx context.Context, caller authz.Principal, outputs []string) ([]trust.JobStatus, error)
	JobMessage(st trust.JobStatus) string
	ProducersOf(ctx context.Context, jobKeys []string) ([]gapsource.ProducerOf, error)
	UnreportedWrites(ctx context.Context, caller authz.Principal, datasetKeys []string) ([]gapsource.Unreported, error)
}

// MaxMemo bounds the answers whose trust gaps are kept in process; maxMemoGaps the gaps of one kept answer (an
// answer with more is recomputed every time), so the memo holds at most MaxMemo x maxMemoGaps gaps.
const (
	MaxMemo     = 2048
	maxMemoGaps = 256
)

// Computer computes answers' trust gaps.
type Computer struct {
	trust   Source
	catalog *catalog.Catalog
	// memo keeps one answer's trust gaps for the TTL New was given (nil: off), keyed by the caller's scope
	// fingerprint (grants and grant epoch), its subject and what the gaps are computed from, so a grant change
	// takes effect at once and an inventory registration or a producer's silence within the TTL.
	memo *ttlcache.Cache[result]
}

// result is what the trust gaps add to one answer.
type result struct {
	gaps []api.Gap
	cov  *api.AnswerCoverage
}

// New is a Computer over src that reads the datasets of an answer's fields through cat; ttl > 0 reuses one
// answer's gaps that long for the same scope.
func New(src Source, cat *catalog.Catalog, ttl time.Duration, clock func() time.Time) *Computer {
	c := &Computer{trust: src, catalog: cat}
	if ttl > 0 {
		c.memo = ttlcache.New[result](ttl, MaxMemo, clock)
	}
	return c
}

// answerDataset is one dataset of an answer: its public id and the names an expected output may give it.
type answerDataset struct {
	id, key string
	outputs []string // "namespace|name" as of the answer and now
}

// Compute returns the trust gaps and coverage of an answer's nodes (datasets, and the datasets of its fields)
// and of its edges' and job nodes' jobs. Only what the caller may see is counted: datasets and fields on the
// answer are visible, the expected writers are filtered by trust, an edge's job is on it only when the caller may
// describe it (hidden: JobKey ""), and producers are named and counted only to a caller with a global scope or
// when they are the caller.
func (g *Computer) Compute(ctx context.Context, p authz.Principal, scope authz.Scope, nodes []api.Node,
	edges []*api.LineageEdge, jobs []string, t int64) ([]api.Gap, *api.AnswerCoverage, error) {
	if g.memo == nil {
		return g.computeNow(ctx, p, scope, nodes, edges, jobs, t)
	}
	key := memoKey(p, scope, nodes, edges, jobs)
	if r, ok, _ := g.memo.Get(key); ok {
		c := *r.cov
		return slices.Clone(r.gaps), &c, nil
	}
	_, _, gen := g.memo.Get("")
	gaps, cov, err := g.computeNow(ctx, p, scope, nodes, edges, jobs, t)
	if err == nil && len(gaps) <= maxMemoGaps {
		c := *cov
		g.memo.Put(key, result{gaps: slices.Clone(gaps), cov: &c}, gen)
	}
	return gaps, cov, err
}

// memoKey digests what an answer's trust gaps are computed from, with the caller's scope and subject.
func memoKey(p authz.Principal, scope authz.Scope, nodes []api.Node, edges []*api.LineageEdge, jobs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%t", scope.Fingerprint, p.Kind, p.Subject, scope.Global)
	for _, n := range nodes {
		switch v := n.(type) {
		case *api.Dataset:
			fmt.Fprintf(&b, "\x00d%s|%s|%s|%s|%s", v.Key, v.Namespace, v.Name, v.CurrentNamespace, v.CurrentName)
		case *api.Field:
			fmt.Fprintf(&b, "\x00f%s", v.DatasetKey)
		}
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "\x00e%s|%s", e.ID, e.JobKey)
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "\x00j%s", j)
	}
	return seal.Digest(b.String())
}

func (g *Computer) computeNow(ctx context.Context, p authz.Principal, scope authz.Scope, nodes []api.Node,
	edges []*api.LineageEdge, jobs []string, t int64) ([]api.Gap, *api.AnswerCoverage, error) {
	ds, err := g.datasets(ctx, nodes, t)
	if err != nil {
		return nil, nil, err
	}
	var outs []string
	for _, d := range ds {
		for _, o := range d.outputs {
			if !slices.Contains(outs, o) {
				outs = append(outs, o)
			}
		}
	}
	keys := make([]string, len(ds))
	for i, d := range ds {
		keys[i] = d.key
	}
	// the three reads are independent: run them at once
	var writers []trust.JobStatus
	var stale []api.Gap
	var unreported []gapsource.Unreported
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) { writers, err = g.trust.ExpectedWriters(ectx, p, outs); return err })
	eg.Go(func() (err error) { stale, err = g.producerGaps(ectx, p, scope, edges, jobs); return err })
	eg.Go(func() (err error) { unreported, err = g.trust.UnreportedWrites(ectx, p, keys); return err })
	if err := eg.Wait(); err != nil {
		return nil, nil, api.StoreErr(err)
	}
	gaps, cov := g.notReporting(ds, writers)
	gaps = append(gaps, stale...)
	return append(gaps, unreportedGaps(ds, unreported, scope.Global)...), cov, nil
}

// Unreported returns only the UNREPORTED_WRITE gaps of an answer's datasets (its Dataset nodes and the datasets
// of its Field nodes), by the rule of Compute (ADR 0063): the answers beyond lineage and impact that include a
// table (piiFlow, effective tags, sensitivity) carry them, not the expected-writer and producer gaps, which are
// about the jobs of a lineage answer.
func (g *Computer) Unreported(ctx context.Context, p authz.Principal, scope authz.Scope, nodes []api.Node, t int64) ([]api.Gap, error) {
	var key string
	var gen uint64
	if g.memo != nil {
		key = "u\x00" + memoKey(p, scope, nodes, nil, nil)
		if r, ok, _ := g.memo.Get(key); ok {
			return slices.Clone(r.gaps), nil
		}
		_, _, gen = g.memo.Get("")
	}
	ds, err := g.datasets(ctx, nodes, t)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ds))
	for i, d := range ds {
		keys[i] = d.key
	}
	un, err := g.trust.UnreportedWrites(ctx, p, keys)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	gaps := unreportedGaps(ds, un, scope.Global)
	if g.memo != nil && len(gaps) <= maxMemoGaps {
		g.memo.Put(key, result{gaps: slices.Clone(gaps), cov: &api.AnswerCoverage{}}, gen)
	}
	return gaps, nil
}

// unreportedGaps is one UNREPORTED_WRITE gap per dataset of the answer with catalog commits that no run the
// caller may see reported writing (ADR 0050): "3 of the last 20 commits to this table came from no instrumented
// job". To a caller without a global scope the sentence says "that you may see": a commit only a hidden job
// reported counts as unreported to it, so the figure never tells that a hidden job exists.
func unreportedGaps(ds []answerDataset, un []gapsource.Unreported, global bool) []api.Gap {
	idOf := map[string]string{}
	for _, d := range ds {
		idOf[d.key] = d.id
	}
	who := "no instrumented job"
	if !global {
		who = "no instrumented job you may see"
	}
	out := make([]api.Gap, 0, len(un))
	for _, u := range un {
		id, ok := idOf[u.DatasetKey]
		if !ok {
			continue
		}
		n, m, latest := u.Unreported, u.Judged, u.Latest
		commits := "commits"
		if m == 1 {
			commits = "commit"
		}
		out = append(out, api.Gap{Kind: api.GapUnreportedWrite, Nodes: []string{id}, Edges: []string{}, Numerator: &n,
			Denominator: &m, Since: &latest, Message: fmt.Sprintf("%d of the last %d %s to this table came from %s (no run reported writing the snapshot)", n, m, commits, who)})
	}
	return out
}

// datasets lists the answer's datasets: its Dataset nodes, then the datasets of its Field nodes (read once).
func (g *Computer) datasets(ctx context.Context, nodes []api.Node, t int64) ([]answerDataset, error) {
	seen := map[string]bool{}
	var out []answerDataset
	add := func(d *api.Dataset) {
		if seen[d.Key] {
			return
		}
		seen[d.Key] = true
		a := answerDataset{id: d.ID, key: d.Key, outputs: []string{d.Namespace + "|" + d.Name}}
		if cur := d.CurrentNamespace + "|" + d.CurrentName; d.CurrentName != "" && cur != a.outputs[0] {
			a.outputs = append(a.outputs, cur)
		}
		out = append(out, a)
	}
	var missing []catalog.NodeKey
	for _, n := range nodes {
		switch v := n.(type) {
		case *api.Dataset:
			add(v)
		case *api.Field:
			if !slices.ContainsFunc(missing, func(k catalog.NodeKey) bool { return k.Key == v.DatasetKey }) {
				missing = append(missing, catalog.NodeKey{Kind: authz.KindDataset, Key: v.DatasetKey})
			}
		}
	}
	missing = slices.DeleteFunc(missing, func(k catalog.NodeKey) bool { return seen[k.Key] })
	if len(missing) == 0 {
		return out, nil
	}
	more, err := g.catalog.Nodes(ctx, missing, t)
	if err != nil {
		return nil, api.StoreErr(err)
	}
	for _, n := range more {
		if d, ok := n.(*api.Dataset); ok {
			add(d)
		}
	}
	return out, nil
}

// notReporting is one JOB_NOT_REPORTING gap per scheduled expected writer of the answer's datasets that did not
// report within its schedule (LATE, NEVER_REPORTED), each with the figure "n of m expected jobs writing this
// answer's datasets are not reporting", and the answer's coverage.
func (g *Computer) notReporting(ds []answerDataset, writers []trust.JobStatus) ([]api.Gap, *api.AnswerCoverage) {
	cov := &api.AnswerCoverage{Datasets: len(ds)}
	idsOf := func(st trust.JobStatus) []string {
		var ids []string
		for _, d := range ds {
			if slices.ContainsFunc(d.outputs, func(o string) bool { return slices.Contains(st.Outputs, o) }) {
				ids = append(ids, d.id)
			}
		}
		return ids
	}
	for _, d := range ds {
		with, reported := false, false
		for _, st := range writers {
			if slices.ContainsFunc(d.outputs, func(o string) bool { return slices.Contains(st.Outputs, o) }) {
				with = true
				reported = reported || writerReported(st)
			}
		}
		cov.WithExpectedWriter += b2i(with)
		cov.Reporting += b2i(reported)
	}
	cov.Label = fmt.Sprintf("%d of %d datasets have an expected writer; %d of those have one that reported",
		cov.WithExpectedWriter, cov.Datasets, cov.Reporting)
	var late []trust.JobStatus
	scheduled := 0
	for _, st := range writers {
		if !rules.Scheduled(time.Duration(st.IntervalMs)*time.Millisecond, st.Paused) {
			continue
		}
		scheduled++
		if st.Status == rules.StatusLate || st.Status == rules.StatusNeverReported {
			late = append(late, st)
		}
	}
	slices.SortFunc(late, func(a, b trust.JobStatus) int {
		return strings.Compare(a.Namespace+"\x00"+a.Name+"\x00"+a.Source, b.Namespace+"\x00"+b.Name+"\x00"+b.Source)
	})
	gaps := make([]api.Gap, 0, len(late))
	for _, st := range late {
		n, m := len(late), scheduled
		gap := api.Gap{Kind: api.GapJobNotReporting, Nodes: idsOf(st), Edges: []string{}, Numerator: &n, Denominator: &m,
			Message: fmt.Sprintf("%d of %d upstream jobs are not reporting: %s", n, m, strings.TrimSpace(g.trust.JobMessage(st)))}
		for _, j := range st.Matched {
			gap.Nodes = append(gap.Nodes, api.JobID(j.Key))
		}
		if !st.Last.IsZero() {
			last := st.Last
			gap.Since = &last
		}
		gaps = append(gaps, gap)
	}
	return gaps, cov
}

// writerReported: an expected writer reported when it reported within its schedule, or some matched job
// reported and no schedule is known, or it is paused and has reported.
func writerReported(st trust.JobStatus) bool {
	switch st.Status {
	case rules.StatusReporting, rules.StatusNoSchedule:
		return true
	case rules.StatusPaused:
		return len(st.Matched) > 0
	}
	return false
}

// producerGaps is one PRODUCER_STALE gap per quiet producer of the answer's jobs (the edges' jobs the caller may
// describe, and job nodes) that the caller may see: every producer for a caller with a global scope, only its
// own principal otherwise (the rule of the coverage producer figures: a producer's activity spans namespaces the
// caller may not see).
func (g *Computer) producerGaps(ctx context.Context, p authz.Principal, scope authz.Scope, edges []*api.LineageEdge,
	jobs []string) ([]api.Gap, error) {
	edgesOf := map[string][]string{}
	for _, e := range edges {
		if e.JobKey == "" {
			continue
		}
		if !slices.Contains(jobs, e.JobKey) {
			jobs = append(jobs, e.JobKey)
		}
		edgesOf[e.JobKey] = append(edgesOf[e.JobKey], e.ID)
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	prods, err := g.trust.ProducersOf(ctx, jobs)
	if err != nil {
		return nil, err
	}
	prods = slices.DeleteFunc(prods, func(x gapsource.ProducerOf) bool { return !scope.Global && x.Producer != p.Subject })
	quiet := 0
	for _, x := range prods {
		quiet += b2i(x.Quiet)
	}
	var gaps []api.Gap
	for _, x := range prods {
		if !x.Quiet {
			continue
		}
		n, m, last := quiet, len(prods), x.Last
		gap := api.Gap{Kind: api.GapProducerStale, Nodes: []string{}, Edges: []string{}, Numerator: &n, Denominator: &m, Since: &last,
			Message: fmt.Sprintf("producer %s went quiet: last observed %s ago (quiet after %s: its P95 gap between "+
				"events %s times its factor); it sent the latest run of %d job(s) on this answer; %d of %d producers on this answer are quiet",
				x.Producer, rules.Age(x.Now.Sub(x.Last)), rules.Age(x.Limit), rules.Age(x.P95), len(x.JobKeys), n, m)}
		for _, k := range x.JobKeys {
			gap.Nodes = append(gap.Nodes, api.JobID(k))
			gap.Edges = append(gap.Edges, edgesOf[k]...)
		}
		gaps = append(gaps, gap)
	}
	return gaps, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
