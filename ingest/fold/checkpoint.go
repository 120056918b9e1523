package fold

import (
	"maps"
	"math"
	"strings"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/internal/ordered"
)

// latestRef is the latest evidence of an edge (by last listing time, then run id).
type latestRef struct {
	LastAt     int64  `json:"t"`
	RunID      string `json:"r"`
	RunState   string `json:"s"`
	JobVersion string `json:"v,omitempty"`
	Producer   string `json:"p,omitempty"`
	// Via is how the evidence listed the subject: "" the run's inputs or outputs, derivColumnLineage an output's
	// column lineage only.
	Via string `json:"d,omitempty"`
}

func (a latestRef) after(b latestRef) bool {
	return a.LastAt > b.LastAt || (a.LastAt == b.LastAt && a.RunID > b.RunID)
}

// EdgeAgg is everything an OBSERVED edge's properties derive from, foldable run by run in time order.
type EdgeAgg struct {
	Fold     foldState `json:"f"`
	First    int64     `json:"a"`
	Latest   latestRef `json:"z"`
	EventIDs []string  `json:"e,omitempty"`
}

// Checkpoint is the fold state of a job's OBSERVED edges at time At: every run with a point before At is
// terminal and folded in, no run straddles At, so a batch whose changed runs all start at or after At can fold
// only the runs starting at or after At into it. Stored on the Job (edgeCkpt, packState).
//
// Column lineage folds the same way (Cols, Inds), with one more condition: its listings were resolved to the field
// histories of the datasets they name, so the checkpoint records each such dataset's fieldsSig and is used only
// while every one is unchanged.
type Checkpoint struct {
	At            int64               `json:"at"`
	Subjects      map[string]*EdgeAgg `json:"s"`
	HasCols       bool                `json:"cols,omitempty"`
	LatestVersion LatestVersionRef    `json:"lv"`
	ColsVersion   int                 `json:"cv,omitempty"` // checkpointColsVersion when Cols and Inds are kept
	Cols          map[string]*ColAgg  `json:"c,omitempty"`
	Inds          map[string]*IndAgg  `json:"i,omitempty"`
	FieldSigs     map[string]string   `json:"fs,omitempty"` // dataset key -> fieldsSig the column fold used
	// Stored is At of the latest copy of this checkpoint kept as a JobCheckpoint node (0: none).
	Stored int64 `json:"st,omitempty"`
	// FromStore marks a checkpoint read from a JobCheckpoint node (not stored; metrics and the save rule).
	FromStore bool `json:"-"`
}

// checkpointColsVersion marks checkpoints that carry the column-lineage fold; a job with column lineage whose
// checkpoint predates it is folded in full once. Version 2: the OBSERVED fold also derives the INPUT_TO edges an
// output's column lineage implies (derivColumnLineage), which older checkpoints lack. Version 3 (projection
// version 10, ADR 0091): every COLUMN_FEEDS keeps its transformation history (ColAgg.TL).
const checkpointColsVersion = 3

// Usable reports whether a job's next batch may fold into the checkpoint as far as column lineage goes.
func (ck *Checkpoint) Usable() bool { return !ck.HasCols || ck.ColsVersion == checkpointColsVersion }

// FieldsChanged reports whether a dataset the column fold resolved fields in has other field histories now.
func (ck *Checkpoint) FieldsChanged(sigs map[string]string) bool {
	for ds, sig := range ck.FieldSigs {
		if sigs[ds] != sig {
			return true
		}
	}
	return false
}

// LatestVersionRef is the job version of the latest run (by start, then run id) that ran a known version.
type LatestVersionRef struct {
	Start   int64  `json:"t"`
	RunID   string `json:"r,omitempty"`
	Version string `json:"v,omitempty"`
}

// WithRuns returns the latest version over v and the runs.
func (v LatestVersionRef) WithRuns(runs []Run) LatestVersionRef {
	for _, r := range runs {
		if r.JobVersion != "" && (v.Version == "" || r.Start > v.Start || (r.Start == v.Start && r.ID > v.RunID)) {
			v = LatestVersionRef{Start: r.Start, RunID: r.ID, Version: r.JobVersion}
		}
	}
	return v
}

func subjectString(s Subject) string { return s.Dir + "|" + s.DS }

func ParseSubject(k string) Subject {
	dir, ds, _ := strings.Cut(k, "|")
	return Subject{Dir: dir, DS: ds}
}

// FoldObserved folds runs (all of whose points lie in [from, until)) and the cuts in that range into a copy of
// prev, per (direction, dataset).
func FoldObserved(prev map[string]*EdgeAgg, runs []Run, cuts map[string][]int64, from, until int64) map[string]*EdgeAgg {
	subjects := map[Subject]bool{}
	for k := range prev {
		subjects[ParseSubject(k)] = true
	}
	for _, r := range runs {
		for _, io := range r.IO {
			subjects[Subject{dirOf(io.Dir), io.DS}] = true
			for _, in := range io.ColInputs() {
				subjects[Subject{graph.RelInputTo, in}] = true
			}
		}
	}
	out := make(map[string]*EdgeAgg, len(subjects))
	for _, s := range sortedSubjects(subjects) {
		agg := EdgeAgg{First: graph.OpenEnd}
		if p := prev[subjectString(s)]; p != nil {
			agg = *p
			agg.EventIDs = append([]string(nil), p.EventIDs...)
		}
		out[subjectString(s)] = foldSubject(agg, s, runs, cutsIn(cuts[s.DS], from, until))
	}
	return out
}

func foldSubject(agg EdgeAgg, s Subject, runs []Run, cuts []int64) *EdgeAgg {
	var ev []Sighting
	var refs []evidenceRef
	for i := range runs {
		r := &runs[i]
		io, via := r.find(s), ""
		if io == nil && s.Dir == graph.RelInputTo {
			if io = r.colInput(s.DS); io != nil {
				via = derivColumnLineage
			}
		}
		switch {
		case io != nil:
			ev = append(ev, Sighting{Start: r.Start, Lists: true, ListedAt: io.FirstAt, Pub: io.Pub})
			refs = append(refs, evidenceRef{run: r, io: io})
			agg.First = min(agg.First, io.FirstAt)
			ref := latestRef{LastAt: io.LastAt, RunID: r.ID, RunState: r.State, JobVersion: r.JobVersion, Producer: io.Producer,
				Via: via}
			if agg.Latest.RunID == "" || ref.after(agg.Latest) {
				agg.Latest = ref
			}
		case r.State == olevent.TypeComplete:
			ev = append(ev, Sighting{Start: r.Start, CanClose: true, CloseAt: r.Ended})
		}
	}
	agg.EventIDs = LastFew(append(agg.EventIDs, recentEventIDs(refs)...))
	agg.Fold = foldIntervals(agg.Fold, ev, cuts)
	return &agg
}

func cutsIn(cuts []int64, from, until int64) []int64 {
	var out []int64
	for _, c := range cuts {
		if c >= from && c < until {
			out = append(out, c)
		}
	}
	return out
}

// EdgesFromAggs renders the OBSERVED edges.
func EdgesFromAggs(aggs map[string]*EdgeAgg) []Edge {
	keys := ordered.Keys(aggs)
	var out []Edge
	for _, k := range keys {
		a := aggs[k]
		ivs := a.Fold.intervals()
		if len(ivs) == 0 {
			continue
		}
		s := ParseSubject(k)
		derivation := "run"
		if a.Latest.Via != "" {
			derivation = a.Latest.Via
		}
		out = append(out, Edge{Dir: s.Dir, DS: s.DS, Kind: graph.KindObserved, Props: edgeProps(ivs, a.First,
			a.Latest.LastAt, a.Latest.Producer, a.EventIDs, a.Latest.JobVersion, a.Latest.RunID, a.Latest.RunState,
			derivation)})
	}
	return out
}

// PinWindow: a run without a terminal event that started less than this (event time) before the job's
// latest event holds the checkpoint before its start, so its COMPLETE folds incrementally. An older one (a run
// whose terminal event was lost) is sealed into the checkpoint; if it ever reports again, the job is folded in
// full once.
const PinWindow = int64(24 * 60 * 60 * 1000)

// nextCheckpoint picks the latest time at or after from such that no run straddles it (starts before it and has
// an event at or after it) and no recent run without a terminal event starts before it.
func nextCheckpoint(runs []Run, from, pinWindow int64) int64 {
	maxLast := from
	for _, r := range runs {
		maxLast = max(maxLast, r.Last+1)
	}
	c := maxLast
	for _, r := range runs {
		if !IsTerminal(r.State) && r.Start >= maxLast-pinWindow {
			c = min(c, r.Start)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, r := range runs {
			if r.Start < c && c <= r.Last {
				c, changed = r.Start, true
			}
		}
	}
	return max(c, from)
}

// AdvanceCheckpoint folds the runs that end before the next checkpoint time into ck. hists and sigs are the field
// histories and fieldsSig of the datasets the runs' column lineage names.
func AdvanceCheckpoint(ck *Checkpoint, runs []Run, cuts map[string][]int64, hists map[string][]*FieldHist,
	sigs map[string]string, pinWindow int64) *Checkpoint {
	from := int64(math.MinInt64)
	var prev map[string]*EdgeAgg
	var prevCols map[string]*ColAgg
	var prevInds map[string]*IndAgg
	next := &Checkpoint{ColsVersion: checkpointColsVersion, FieldSigs: map[string]string{}}
	if ck != nil {
		from, prev, next.LatestVersion, next.HasCols = ck.At, ck.Subjects, ck.LatestVersion, ck.HasCols
		prevCols, prevInds, next.Stored = ck.Cols, ck.Inds, ck.Stored
		maps.Copy(next.FieldSigs, ck.FieldSigs)
	}
	next.At = nextCheckpoint(runs, from, pinWindow)
	var sealed []Run
	for _, r := range runs {
		if r.Last < next.At {
			sealed = append(sealed, r)
		}
	}
	next.Subjects = FoldObserved(prev, sealed, cuts, from, next.At)
	next.LatestVersion = next.LatestVersion.WithRuns(sealed)
	for _, r := range runs {
		next.HasCols = next.HasCols || r.hasCols()
	}
	if next.HasCols {
		next.Cols, next.Inds = FoldColumns(prevCols, sealed, hists), FoldIndirect(prevInds, sealed)
		for _, ds := range ColumnDatasets(sealed) {
			next.FieldSigs[ds] = sigs[ds]
		}
	}
	if len(next.FieldSigs) == 0 {
		next.FieldSigs = nil
	}
	return next
}

// ColumnDatasets are the datasets named by the runs' column lineage (outputs and input fields), sorted.
func ColumnDatasets(runs []Run) []string {
	set := map[string]bool{}
	for _, r := range runs {
		for _, io := range r.IO {
			if io.Cols == nil {
				continue
			}
			set[io.DS] = true
			for _, f := range io.Cols.Fields {
				set[f.In] = true
			}
		}
	}
	return ordered.Keys(set)
}

func (r *Run) hasCols() bool {
	for _, io := range r.IO {
		if io.Cols != nil {
			return true
		}
	}
	return false
}
