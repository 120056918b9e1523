package fold

import (
	"maps"
	"math"
	"sort"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/ordered"
)

// Run is a run of a job as the edge derivation sees it (read back from Run nodes and READ/WROTE).
type Run struct {
	Key                   string // the run's key (graph.RunKey): how the job fold state holds it
	ID, State, JobVersion string
	Start, Ended, Last    int64 // first RunEvent time, endedAt, lastEventTime
	Streaming             bool
	IO                    []IO
}

// IO is one READ or WROTE of a run.
type IO struct {
	Dir, DS         string // graph.RelRead or graph.RelWrote
	FirstAt, LastAt int64
	Pub, Producer   string
	EventIDs        []string
	Cols            *ColsDoc
	// Version is the row's datasetVersion ("" when none); Schema is the path -> field id map of that version's
	// Iceberg schema when the catalog sync recorded one (nil otherwise; ADR 0065).
	Version string
	Schema  map[string]string `json:"-"`
}

// Decl is one JobEvent: the job's declared inputs and outputs at that time.
type Decl struct {
	ID, Producer    string
	T               int64
	Inputs, Outputs map[string]bool
}

// Edge is one derived lineage relationship between a job and a dataset.
type Edge struct {
	Job           string
	Dir, DS, Kind string // Dir: graph.RelInputTo or graph.RelOutputTo
	Props         map[string]any
}

func dirOf(io string) string {
	if io == graph.RelRead {
		return graph.RelInputTo
	}
	return graph.RelOutputTo
}

// Subject identifies one (direction, dataset).
type Subject struct{ Dir, DS string }

// ObservedEdges derives the OBSERVED edges of a job from all its runs: a pure function.
func ObservedEdges(runs []Run, cuts map[string][]int64) []Edge {
	return EdgesFromAggs(FoldObserved(nil, runs, cuts, math.MinInt64, graph.OpenEnd))
}

func (r *Run) find(s Subject) *IO {
	for i := range r.IO {
		if r.IO[i].DS == s.DS && dirOf(r.IO[i].Dir) == s.Dir {
			return &r.IO[i]
		}
	}
	return nil
}

// derivColumnLineage is the derivation of an OBSERVED INPUT_TO whose latest evidence is a run that did not list the
// dataset among its inputs but whose column lineage for one of its outputs names it (issue 14 item 3): dbt-ol
// leaves seeds out of `inputs`, the Spark integration reports Iceberg V2 appends with `inputs: []`. Naming a
// dataset's columns as the source of an output's is reading it, and reading needs no ownership (ADR 0018).
const derivColumnLineage = graph.DerivationColumnLineage

// colInput is the run's reading of ds evidenced only by the column lineage of its outputs (not the output itself):
// first named at the earliest listing of a mapping from ds, last at the latest event that wrote such an output,
// published like the run's reads. nil when no output's column lineage names ds.
func (r *Run) colInput(ds string) *IO {
	var in *IO
	for i := range r.IO {
		o := &r.IO[i]
		if o.Dir != graph.RelWrote || o.Cols == nil || o.DS == ds {
			continue
		}
		at, ok := o.Cols.firstNaming(ds)
		if !ok {
			continue
		}
		if in == nil {
			in = &IO{Dir: graph.RelRead, DS: ds, FirstAt: at, LastAt: o.LastAt, Producer: o.Producer,
				Pub: RunPub(r.State, r.Streaming, "")}
		}
		in.FirstAt, in.LastAt = min(in.FirstAt, at), max(in.LastAt, o.LastAt)
		in.EventIDs = LastFew(append(in.EventIDs, o.EventIDs...))
	}
	return in
}

// ColInputs are the datasets other than the output that a WROTE's column lineage names, sorted.
func (io *IO) ColInputs() []string {
	if io.Dir != graph.RelWrote || io.Cols == nil {
		return nil
	}
	set := map[string]bool{}
	for _, f := range io.Cols.Fields {
		set[f.In] = true
	}
	for _, d := range io.Cols.Dataset {
		set[d.In] = true
	}
	delete(set, io.DS)
	delete(set, "")
	return ordered.Keys(set)
}

// evidenceRef is a run's listing of a subject.
type evidenceRef struct {
	run *Run
	io  *IO
}

func (a evidenceRef) after(b evidenceRef) bool {
	if a.io.LastAt != b.io.LastAt {
		return a.io.LastAt > b.io.LastAt
	}
	return a.run.ID > b.run.ID
}

// recentEventIDs returns the last few source event ids over the listings, oldest first.
func recentEventIDs(refs []evidenceRef) []string {
	sorted := append([]evidenceRef(nil), refs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[j].after(sorted[i]) })
	var ids []string
	for _, r := range sorted {
		ids = append(ids, r.io.EventIDs...)
	}
	return LastFew(ids)
}

func sortedSubjects(m map[Subject]bool) []Subject {
	out := make([]Subject, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].DS < out[j].DS
	})
	return out
}

// DeclaredEdges derives the DECLARED edges of a job from its JobEvents: an interval opens at a declaration that
// lists the dataset and closes at the next declaration that withdraws it.
func DeclaredEdges(decls []Decl, jobVersion string) []Edge {
	subjects := map[Subject]bool{}
	for _, d := range decls {
		for k := range d.Inputs {
			subjects[Subject{graph.RelInputTo, k}] = true
		}
		for k := range d.Outputs {
			subjects[Subject{graph.RelOutputTo, k}] = true
		}
	}
	sorted := append([]Decl(nil), decls...)
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].T < sorted[j].T || (sorted[i].T == sorted[j].T && sorted[i].ID < sorted[j].ID)
	})
	var out []Edge
	for _, s := range sortedSubjects(subjects) {
		var ev []Sighting
		var ids []string
		var first, last int64 = graph.OpenEnd, 0
		producer := ""
		for _, d := range sorted {
			set := d.Inputs
			if s.Dir == graph.RelOutputTo {
				set = d.Outputs
			}
			if set[s.DS] {
				ev = append(ev, Sighting{Start: d.T, Lists: true, ListedAt: d.T, Pub: graph.PubPublished})
				ids, first, last, producer = append(ids, d.ID), min(first, d.T), max(last, d.T), d.Producer
			} else {
				ev = append(ev, Sighting{Start: d.T, CanClose: true, CloseAt: d.T})
			}
		}
		ivs := Intervals(ev, nil)
		if len(ivs) == 0 {
			continue
		}
		out = append(out, Edge{Dir: s.Dir, DS: s.DS, Kind: graph.KindDeclared,
			Props: edgeProps(ivs, first, last, producer, LastFew(ids), jobVersion, "", "", "jobEvent")})
	}
	return out
}

// edgeProps builds the properties every lineage relationship carries (docs/graph-model.md).
func edgeProps(ivs []graph.Interval, first, last int64, producer string, eventIDs []string, jobVersion, runID,
	runState, derivation string) map[string]any {
	kind := graph.KindObserved
	if derivation != "run" && derivation != derivColumnLineage {
		kind = graph.KindDeclared
	}
	props := graph.IntervalProps(ivs)
	maps.Copy(props, map[string]any{"kind": kind,
		"firstObservedAt": first, "lastObservedAt": last, "producer": producer, "eventIds": toAny(eventIDs),
		"jobVersion": jobVersion, "lastRunId": runID, "lastRunState": runState, "derivation": derivation})
	return props
}
