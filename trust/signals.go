package trust

import (
	"context"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/trust/rules"
)

// criticalJobs returns, when the query names a criticality, the keys of the reported jobs that visible
// expected jobs of that criticality matched (nil: no restriction).
func (r *Report) criticalJobs(ctx context.Context) (map[string]bool, error) {
	if r.Query.Criticality == "" {
		return nil, nil
	}
	m, err := r.expected(ctx)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, st := range m.visible {
		for _, j := range st.Matched {
			keys[j.Key] = true
		}
	}
	return keys, nil
}

func (r *Report) runs(ctx context.Context) (*Figure, error) {
	from, cutoff := r.Now.Add(-r.Query.Window), r.Now.Add(-r.svc.cfg.RunGrace)
	rows, err := r.svc.r.Runs(ctx, Filter{Namespace: r.Query.Namespace}, ms(from), ms(cutoff))
	if err != nil {
		return nil, err
	}
	only, err := r.criticalJobs(ctx)
	if err != nil {
		return nil, err
	}
	var b checks
	for _, jr := range rows {
		b.add(b.next(), authz.PrivDescribe, jobCand(jr.Job.Key, jr.Job.Namespace, jr.Job.Name))
	}
	ok, err := r.allowed(ctx, &b)
	if err != nil {
		return nil, err
	}
	f := &Figure{Signal: SignalRunsWithoutTerminal, Window: r.Query.Window, Description: fmt.Sprintf(
		"runs started in the window that have START but no terminal event %s after starting", age(r.svc.cfg.RunGrace))}
	var g grouper
	for i, jr := range rows {
		if !ok[i] || (only != nil && !only[jr.Job.Key]) {
			continue
		}
		f.Denominator += int(jr.Started)
		f.Numerator += len(jr.Open)
		g.add("namespace", jr.Job.Namespace, len(jr.Open), int(jr.Started))
		for _, o := range jr.Open {
			started := fromMs(o.StartedAt)
			f.add(Item{Kind: ItemRun, JobKeys: []string{jr.Job.Key}, RunKey: o.Key, Namespace: jr.Job.Namespace,
				Name: jr.Job.Name, Status: o.State, Since: started, Message: fmt.Sprintf(
					"run %s of %s started %s ago and has no terminal event (state %s)", o.RunID, jr.Job.Name,
					age(r.Now.Sub(started)), o.State)})
		}
	}
	f.Groups = g.groups()
	return f, nil
}

func (r *Report) unresolved(ctx context.Context) (*Figure, error) {
	rows, err := r.svc.r.Unresolved(ctx, Filter{Namespace: r.Query.Namespace}, ms(r.Now.Add(-r.Query.Window)))
	if err != nil {
		return nil, err
	}
	var b checks
	for _, u := range rows {
		b.add(b.next(), authz.PrivDescribe, datasetCand("", u.Namespace, u.Name))
	}
	ok, err := r.allowed(ctx, &b)
	if err != nil {
		return nil, err
	}
	f := &Figure{Signal: SignalUnresolvedIdentities, Window: r.Query.Window,
		Description: "dataset identifiers seen in the window that name no single dataset (nothing is guessed)"}
	for i, u := range rows {
		if !ok[i] {
			continue
		}
		f.Numerator++
		f.add(Item{Kind: ItemIdentity, Namespace: u.Namespace, Name: u.Name, Reason: u.Reason,
			Since: fromMs(u.LastSeenAt), Message: fmt.Sprintf("%s %s is unresolved: %s", u.Namespace, u.Name, u.Reason)})
	}
	return f, nil
}

// edges counts lineage edges as the API shows them: (input dataset, job, output dataset) through a job the caller
// may describe, between datasets it has VIEW_LINEAGE on. An edge is fresh when both its legs were re-observed
// within the job's staleness threshold (the lineage rule: the path was whole then).
func (r *Report) edges(ctx context.Context) (*Figure, error) {
	rows, err := r.svc.r.Edges(ctx, Filter{Namespace: r.Query.Namespace}, ms(r.Now))
	if err != nil {
		return nil, err
	}
	only, err := r.criticalJobs(ctx)
	if err != nil {
		return nil, err
	}
	var b checks
	for _, e := range rows {
		id := b.next()
		b.add(id, authz.PrivDescribe, jobCand(e.Job.Key, e.Job.Namespace, e.Job.Name))
		b.add(id, authz.PrivViewLineage, datasetCand(e.DatasetKey, e.DatasetNamespace, e.DatasetName))
	}
	ok, err := r.allowed(ctx, &b)
	if err != nil {
		return nil, err
	}
	cfg := r.svc.cfg
	f := &Figure{Signal: SignalEdgeFreshness, Description: fmt.Sprintf("current observed lineage edges (input, job, "+
		"output) whose legs were re-observed within their staleness threshold (%g times the job's usual interval "+
		"between runs, at least %s)", cfg.StaleFactor, age(cfg.StaleMin))}
	var g grouper
	for _, legs := range byJob(rows, ok, only) {
		r.countJobEdges(f, &g, legs)
	}
	f.Groups = g.groups()
	return f, nil
}

// byJob groups the visible legs by job, in first-seen order.
func byJob(rows []EdgeRow, ok []bool, only map[string]bool) [][]EdgeRow {
	idx := map[string]int{}
	var out [][]EdgeRow
	for i, e := range rows {
		if !ok[i] || (only != nil && !only[e.Job.Key]) {
			continue
		}
		k, seen := idx[e.Job.Key]
		if !seen {
			k = len(out)
			idx[e.Job.Key] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], e)
	}
	return out
}

func (r *Report) countJobEdges(f *Figure, g *grouper, legs []EdgeRow) {
	cfg := r.svc.cfg
	j := legs[0]
	limit := rules.StaleThreshold(fromMs(j.FirstSeenAt), fromMs(j.Job.LastSeenAt), j.Runs, cfg.StaleFactor, cfg.StaleMin)
	var ins, outs []EdgeRow
	for _, e := range legs {
		if e.Direction == "INPUT_TO" {
			ins = append(ins, e)
		} else {
			outs = append(outs, e)
		}
	}
	fresh := func(e EdgeRow) bool { return r.Now.Sub(fromMs(e.LastObservedAt)) <= limit }
	total, ok := len(ins)*len(outs), countIf(ins, fresh)*countIf(outs, fresh)
	f.Denominator += total
	f.Numerator += ok
	g.add("namespace", j.Job.Namespace, ok, total)
	for _, in := range ins {
		for _, out := range outs {
			if fresh(in) && fresh(out) {
				continue
			}
			last := fromMs(min(in.LastObservedAt, out.LastObservedAt))
			f.add(Item{Kind: ItemEdge, JobKeys: []string{j.Job.Key}, DatasetKeys: []string{in.DatasetKey, out.DatasetKey},
				Namespace: out.DatasetNamespace, Name: out.DatasetName, Since: last, Message: fmt.Sprintf(
					"%s -> %s through %s: last observed %s ago, threshold %s", in.DatasetName, out.DatasetName,
					j.Job.Name, age(r.Now.Sub(last)), age(limit))})
		}
	}
}

func countIf(es []EdgeRow, pred func(EdgeRow) bool) int {
	n := 0
	for _, e := range es {
		if pred(e) {
			n++
		}
	}
	return n
}

// columns counts the datasets a job the caller may describe currently writes, and of those the ones with column
// lineage from a dataset the caller may describe through a job it may describe (a column that comes only from
// something hidden counts as none, as the NO_COLUMN_LINEAGE gap says).
func (r *Report) columns(ctx context.Context) (*Figure, error) {
	rows, err := r.svc.r.WrittenDatasets(ctx, Filter{Namespace: r.Query.Namespace}, ms(r.Now))
	if err != nil {
		return nil, err
	}
	var cs []authz.Check
	for _, d := range rows {
		cs = append(cs, authz.Check{Priv: authz.PrivDescribe, Candidate: datasetCand(d.Key, d.Namespace, d.Name)})
		for _, w := range d.Writers {
			cs = append(cs, authz.Check{Priv: authz.PrivDescribe, Candidate: jobCand(w.Key, w.Namespace, w.Name)})
		}
		for _, c := range d.ColumnSources {
			cs = append(cs, authz.Check{Priv: authz.PrivDescribe, Candidate: datasetCand(c.DatasetKey, c.DatasetNamespace, c.DatasetName)},
				authz.Check{Priv: authz.PrivDescribe, Candidate: jobCand(c.Job.Key, c.Job.Namespace, c.Job.Name)})
		}
	}
	ok, err := r.each(ctx, cs)
	if err != nil {
		return nil, err
	}
	f := &Figure{Signal: SignalColumnLineage,
		Description: "datasets a job currently writes that have column lineage (the rest have table-level lineage only)"}
	var g grouper
	i := 0
	for _, d := range rows {
		seen, written, col := ok[i], false, false
		i++
		for range d.Writers {
			written = written || ok[i]
			i++
		}
		for range d.ColumnSources {
			col = col || (ok[i] && ok[i+1])
			i += 2
		}
		if !seen || !written {
			continue
		}
		f.Denominator++
		f.Numerator += b2i(col)
		g.add("namespace", d.Namespace, b2i(col), 1)
		if !col {
			f.add(Item{Kind: ItemDataset, DatasetKeys: []string{d.Key}, Namespace: d.Namespace, Name: d.Name,
				Message: d.Namespace + " " + d.Name + ": no column lineage (table level only)"})
		}
	}
	f.Groups = g.groups()
	return f, nil
}

// producerScope is the producer the caller may see producer-keyed figures of: any (the filter asked) for a
// caller who may describe everything, else only itself; ok false when the filter names another producer.
func (r *Report) producerScope() (string, bool) {
	if r.Scope.Global {
		return r.Query.Producer, true
	}
	if r.Query.Producer != "" && r.Query.Producer != r.caller.Subject {
		return "", false
	}
	return r.caller.Subject, true
}

func (r *Report) producers(ctx context.Context, sig Signal) (*Figure, error) {
	cfg := r.svc.cfg
	quiet := &Figure{Signal: SignalQuietProducers, Description: fmt.Sprintf("producer principals with events in the "+
		"last %s that sent none for longer than their P95 gap between events times %g (at least %s)",
		age(cfg.QuietLookback), cfg.QuietFactor, age(cfg.QuietMin))}
	rejected := &Figure{Signal: SignalRejectedEvents, Window: r.Query.Window,
		Description: "events refused or quarantined in the window, of all events received in it, by producer and rule"}
	producer, ok := r.producerScope()
	if ok {
		if err := r.fillProducers(ctx, producer, quiet, rejected); err != nil {
			return nil, err
		}
	}
	quiet.rep, rejected.rep = r, r
	r.figures[SignalQuietProducers], r.figures[SignalRejectedEvents] = quiet, rejected
	if sig == SignalQuietProducers {
		return quiet, nil
	}
	return rejected, nil
}

func (r *Report) fillProducers(ctx context.Context, producer string, quiet, rejected *Figure) error {
	cfg := r.svc.cfg
	lookFrom, winFrom := r.Now.Add(-cfg.QuietLookback), r.Now.Add(-r.Query.Window)
	act, err := r.svc.r.Activity(ctx, producer, ms(minTime(lookFrom, winFrom)))
	if err != nil {
		return err
	}
	rej, err := r.svc.r.Rejections(ctx, producer, ms(winFrom))
	if err != nil {
		return err
	}
	for _, a := range act {
		recent, accepted := splitActivity(a, ms(lookFrom)/60000, ms(winFrom)/60000)
		rejected.Denominator += int(accepted)
		if len(recent) == 0 {
			continue
		}
		r.quietOne(quiet, a, recent)
	}
	var g grouper
	for _, x := range rej {
		rejected.Numerator += int(x.Count)
		rejected.Denominator += int(x.Count)
		g.add("producer", x.Producer, int(x.Count), 0)
		g.add("rule", x.Rule, int(x.Count), 0)
		rejected.add(Item{Kind: ItemRejection, Producer: x.Producer, Reason: x.Rule, Count: x.Count, Since: fromMs(x.Last),
			Message: fmt.Sprintf("%d events of %s rejected by rule %s, the last %s ago", x.Count, x.Producer, x.Rule,
				age(r.Now.Sub(fromMs(x.Last))))})
	}
	rejected.Groups = g.groups()
	return nil
}

func (r *Report) quietOne(f *Figure, a ActivityRow, recent []int64) {
	p95 := rules.P95Gap(recent)
	limit := r.svc.QuietLimit(a.Producer, p95)
	last := fromMs(a.Last)
	f.Denominator++
	if r.Now.Sub(last) <= limit {
		f.Groups = append(f.Groups, Group{Dimension: "producer", Key: a.Producer, Denominator: 1})
		return
	}
	f.Numerator++
	f.Groups = append(f.Groups, Group{Dimension: "producer", Key: a.Producer, Numerator: 1, Denominator: 1})
	f.add(Item{Kind: ItemProducer, Producer: a.Producer, Since: last, Status: "QUIET", Message: fmt.Sprintf(
		"%s sent no event for %s (P95 gap %s, quiet after %s)", a.Producer, age(r.Now.Sub(last)), age(p95), age(limit))})
}

// splitActivity returns the active minutes at or after lookFrom and the events received at or after winFrom.
func splitActivity(a ActivityRow, lookFrom, winFrom int64) ([]int64, int64) {
	var recent []int64
	var n int64
	for i, m := range a.Minutes {
		if m >= lookFrom {
			recent = append(recent, m)
		}
		if m >= winFrom && i < len(a.Counts) {
			n += a.Counts[i]
		}
	}
	return recent, n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// reportedWrites: the catalog commits (Iceberg snapshots the sync recorded) of the window, older than the write
// grace, that a run of a job the caller may describe reported writing, of all such commits to tables the caller
// may describe (ADR 0050). A commit only hidden jobs reported counts as unreported to the caller, so the figure
// never tells a hidden job exists. Items: the tables with unreported commits.
func (r *Report) reportedWrites(ctx context.Context) (*Figure, error) {
	before := r.Now.Add(-r.svc.cfg.WriteGrace)
	rows, err := r.svc.r.CatalogCommits(ctx, Filter{Namespace: r.Query.Namespace}, ms(r.Now.Add(-r.Query.Window)), ms(before))
	if err != nil {
		return nil, err
	}
	var cs []authz.Check
	for _, g := range rows {
		cs = append(cs, authz.Check{Priv: authz.PrivDescribe, Candidate: datasetCand(g.Key, g.Namespace, g.Name)})
		for _, w := range g.Writers {
			cs = append(cs, authz.Check{Priv: authz.PrivDescribe, Candidate: jobCand(w.Key, w.Namespace, w.Name)})
		}
	}
	ok, err := r.each(ctx, cs)
	if err != nil {
		return nil, err
	}
	f := &Figure{Signal: SignalReportedWrites,
		Description: "catalog commits (Iceberg snapshots) in the window, past the write grace, that a run reported writing"}
	type table struct {
		g                   CommitGroup
		unreported, commits int
		latest              int64
	}
	var order []string
	by := map[string]*table{}
	i := 0
	for _, g := range rows {
		seen, reported := ok[i], false
		i++
		for range g.Writers {
			reported = reported || ok[i]
			i++
		}
		if !seen {
			continue
		}
		t := by[g.Key]
		if t == nil {
			t = &table{g: g}
			by[g.Key] = t
			order = append(order, g.Key)
		}
		t.commits += int(g.Commits)
		if !reported {
			t.unreported += int(g.Commits)
			t.latest = max(t.latest, g.Latest)
		}
	}
	who := "no instrumented job"
	if !r.Scope.Global {
		who = "no instrumented job you may see"
	}
	var gr grouper
	for _, k := range order {
		t := by[k]
		f.Denominator += t.commits
		f.Numerator += t.commits - t.unreported
		gr.add("namespace", t.g.Namespace, t.commits-t.unreported, t.commits)
		if t.unreported > 0 {
			f.add(Item{Kind: ItemDataset, DatasetKeys: []string{k}, Namespace: t.g.Namespace, Name: t.g.Name, Count: int64(t.unreported),
				Since: fromMs(t.latest), Message: fmt.Sprintf("%s %s: %d of %d commits in the window came from %s",
					t.g.Namespace, t.g.Name, t.unreported, t.commits, who)})
		}
	}
	f.Groups = gr.groups()
	return f, nil
}
