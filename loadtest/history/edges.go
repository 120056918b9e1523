package history

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/loadtest/gen"
)

// intervals is a compacted edge history: its stored intervals and its first and last observation.
type intervals struct {
	ivs         []graph.Interval
	first, last int64
}

// with adds the stored interval properties (graph.IntervalProps, the projector's codec) to a row.
func (iv intervals) with(row map[string]any) map[string]any {
	maps.Copy(row, graph.IntervalProps(iv.ivs))
	return row
}

// Edge directions, mixed into the per-edge random stream.
const (
	dirIn  = 1
	dirOut = 2
)

// edgeHistory draws the year of one (dataset, job, direction) edge: most are open since the later of the
// dataset's creation and the job's; some had a gap (closed by a COMPLETE run that omitted the dataset, then
// re-opened); a few closed for good. A closed interval's publication is sometimes ATTEMPTED.
func (l *Loader) edgeHistory(job, ds, dir int) intervals {
	r := rand.New(rand.NewPCG(l.cfg.World.Config.Seed^uint64(job)<<20^uint64(ds), streamEdges+uint64(dir)))
	from := l.keys.created[ds]
	for _, o := range l.cfg.World.Jobs[job].Outputs {
		from = max(from, l.keys.created[o])
	}
	end := l.keys.end
	span := end - from
	last := end - r.Int64N(2*dayMs)
	x := r.Float64()
	switch {
	case x < 0.85 || span < 4*dayMs:
		return intervals{ivs: []graph.Interval{{From: from, To: graph.OpenEnd, Pub: graph.PubPublished}}, first: from, last: last}
	case x < 0.95:
		closeAt := from + span/4 + r.Int64N(span/4)
		reopen := closeAt + r.Int64N(span/4)
		return intervals{ivs: []graph.Interval{{From: from, To: closeAt, Pub: graph.PubPublished},
			{From: reopen, To: graph.OpenEnd, Pub: graph.PubPublished}}, first: from, last: last}
	default:
		closeAt := from + span/2 + r.Int64N(span/4)
		pub := graph.PubPublished
		if r.IntN(3) == 0 {
			pub = graph.PubAttempted
		}
		return intervals{ivs: []graph.Interval{{From: from, To: closeAt, Pub: pub}}, first: from, last: closeAt}
	}
}

func (l *Loader) edgeRow(j gen.Job, ds int, iv intervals) map[string]any {
	return iv.with(map[string]any{"ds": l.keys.dataset[ds], "job": l.keys.job[j.ID], "first": iv.first,
		"ev": l.ownEvidence(j, iv, l.edgeEvidence)})
}

// ownEvidence is what an edge of job j with intervals iv stores of its latest evidence (ev renders it): nothing
// when it is the job's (projection version 4: the Job carries it, jobEvidence), else its own. Every open edge was
// listed by the job's latest run that listed any (openLast); a closed edge last at its own time.
func (l *Loader) ownEvidence(j gen.Job, iv intervals, ev func(gen.Job, int64) map[string]any) map[string]any {
	openLast, jobLast := l.jobLatest(j)
	last := iv.last
	if iv.open() {
		last = openLast
	}
	if last == jobLast {
		return map[string]any{}
	}
	return ev(j, last)
}

func (iv intervals) open() bool { return len(iv.ivs) > 0 && iv.ivs[len(iv.ivs)-1].To == graph.OpenEnd }

// edgeEvidence is the latest evidence of an edge of job j last listed at last (graph.EdgeEvidenceProps).
func (l *Loader) edgeEvidence(j gen.Job, last int64) map[string]any {
	run := runIDFor(l.cfg.World.Config, j.ID, last)
	return map[string]any{"lastObservedAt": last, "producer": producerOf(j), "eventIds": []any{run},
		"jobVersion": l.keys.jobVer[j.ID], "lastRunId": run, "lastRunState": "COMPLETE", "derivation": "run"}
}

// jobLatest is the latest listing of job j's open edges (openLast) and of any of its edges (jobLast): the job
// keeps the evidence of jobLast (the projector's jobEvidence).
func (l *Loader) jobLatest(j gen.Job) (openLast, jobLast int64) {
	openLast, jobLast = math.MinInt64, math.MinInt64
	see := func(iv intervals) {
		if iv.open() {
			openLast = max(openLast, iv.last)
		}
		jobLast = max(jobLast, iv.last)
	}
	for _, d := range j.Inputs {
		see(l.edgeHistory(j.ID, d, dirIn))
	}
	for _, d := range j.Outputs {
		see(l.edgeHistory(j.ID, d, dirOut))
	}
	return openLast, max(openLast, jobLast)
}

// jobEvidence is the Job properties holding job j's latest edge evidence (graph.JobEvidenceProp).
func (l *Loader) jobEvidence(j gen.Job) map[string]any {
	out := map[string]any{}
	if len(j.Inputs)+len(j.Outputs) == 0 {
		return out
	}
	_, last := l.jobLatest(j)
	for k, v := range l.edgeEvidence(j, last) {
		out[graph.JobEvidenceProp(k)] = v
	}
	return out
}

// edges: INPUT_TO and OUTPUT_TO, sorted by dataset key inside each batch.
func (l *Loader) edges(emit func(batch) error) error {
	in := l.chunk(cypherInputTo, "ds", emit)
	out := l.chunk(cypherOutputTo, "ds", emit)
	for _, j := range l.cfg.World.Jobs {
		for _, d := range j.Inputs {
			if err := in.add(l.edgeRow(j, d, l.edgeHistory(j.ID, d, dirIn))); err != nil {
				return err
			}
		}
		for _, d := range j.Outputs {
			if err := out.add(l.edgeRow(j, d, l.edgeHistory(j.ID, d, dirOut))); err != nil {
				return err
			}
		}
	}
	if err := in.flush(); err != nil {
		return err
	}
	return out.flush()
}

// columns: COLUMN_FEEDS per (input field, output field, job) with the transformations as parallel arrays,
// and INDIRECT_FEEDS once per (input dataset, output dataset, job) for the facet's dataset-level entries.
// Their intervals are those of the job's OUTPUT_TO edge to that output.
func (l *Loader) columns(emit func(batch) error) error {
	cf := l.chunk(cypherColumnFeeds, "to", emit)
	ind := l.chunk(cypherIndirectFeeds, "to", emit)
	w := l.cfg.World
	for _, j := range w.Jobs {
		for k, out := range j.Outputs {
			m := w.ColumnLineage(j.ID, k)
			if m == nil {
				continue
			}
			iv := l.edgeHistory(j.ID, out, dirOut)
			for _, row := range l.columnRows(j, out, m, iv) {
				if err := cf.add(row); err != nil {
					return err
				}
			}
			for _, row := range l.indirectRows(j, out, m, iv) {
				if err := ind.add(row); err != nil {
					return err
				}
			}
		}
	}
	if err := cf.flush(); err != nil {
		return err
	}
	return ind.flush()
}

type columnEdge struct {
	from, to string
	tt, ts   []string
	tm       []bool
	td       []string
}

func (l *Loader) columnRows(j gen.Job, out int, m *gen.ColumnMapping, iv intervals) []map[string]any {
	edges := map[[2]string]*columnEdge{}
	var order [][2]string
	for path, ins := range m.Fields {
		to := l.fieldKey(out, path)
		for _, in := range ins {
			k := [2]string{l.fieldKey(in.DatasetID, in.Field), to}
			e, ok := edges[k]
			if !ok {
				e = &columnEdge{from: k[0], to: k[1]}
				edges[k], order = e, append(order, k)
			}
			// The same input field listed twice for one output field: the projector keeps the transformations
			// of the last listing, so the loader does too.
			e.tt, e.ts, e.tm, e.td = nil, nil, nil, nil
			for _, t := range in.Transformations {
				e.tt, e.ts, e.tm, e.td = append(e.tt, t.Type), append(e.ts, t.Subtype), append(e.tm, t.Masking), append(e.td, t.Description)
			}
		}
	}
	rows := make([]map[string]any, 0, len(order))
	for _, k := range order {
		e := edges[k]
		rows = append(rows, iv.with(map[string]any{"from": e.from, "to": e.to, "job": l.keys.job[j.ID],
			"tt": e.tt, "ts": e.ts, "tm": e.tm, "td": e.td, "ev": l.columnEvidence(j, iv)}))
	}
	return rows
}

func (l *Loader) indirectRows(j gen.Job, out int, m *gen.ColumnMapping, iv intervals) []map[string]any {
	subtypes := map[int][]string{}
	var order []int
	for _, in := range m.Dataset {
		if _, ok := subtypes[in.DatasetID]; !ok {
			order = append(order, in.DatasetID)
		}
		for _, t := range in.Transformations {
			subtypes[in.DatasetID] = append(subtypes[in.DatasetID], t.Subtype)
		}
	}
	rows := make([]map[string]any, 0, len(order))
	for _, ds := range order {
		subtypes[ds] = slices.Compact(slices.Sorted(slices.Values(subtypes[ds]))) // a set, as the projector stores it
		rows = append(rows, iv.with(map[string]any{"from": l.keys.dataset[ds], "to": l.keys.dataset[out],
			"job": l.keys.job[j.ID], "subtypes": subtypes[ds]}))
	}
	return rows
}

// columnEvidence is a COLUMN_FEEDS's own evidence (graph.ColumnEvidenceProps) with its output edge's intervals iv:
// none when that is the job's.
func (l *Loader) columnEvidence(j gen.Job, iv intervals) map[string]any {
	return l.ownEvidence(j, iv, func(j gen.Job, last int64) map[string]any {
		return map[string]any{"lastRunId": runIDFor(l.cfg.World.Config, j.ID, last), "lastObservedAt": last}
	})
}
