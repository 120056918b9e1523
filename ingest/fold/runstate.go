package fold

import (
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Order is where an event sits in the canonical event order (Before).
type Order struct {
	Time int64 // eventTime, ms
	Type string
	Recv int64 // receive time, ms
	ID   string
}

// Before is the canonical event order: eventTime; ties: terminal after non-terminal, then receive time, then
// eventId.
func (a Order) Before(b Order) bool {
	if a.Time != b.Time {
		return a.Time < b.Time
	}
	if ta, tb := IsTerminal(a.Type), IsTerminal(b.Type); ta != tb {
		return tb
	}
	if a.Recv != b.Recv {
		return a.Recv < b.Recv
	}
	return a.ID < b.ID
}

// RunEvent is one event as the run fold sees it: a RunEvent of the run, or a DatasetEvent carrying the
// publication of one of its outputs (Kind olevent.KindDataset, Subject).
type RunEvent struct {
	Order
	Kind             string
	Producer         string
	Job              RunJob
	Facets           map[string]json.RawMessage // run facets
	Deleted          []string                   // run facets sent with _deleted: true
	Parent, Root     *RunRef
	NomStart, NomEnd *int64
	ErrorMsg         string
	Inputs, Outputs  []RunDataset
	Subject          *RunDataset // a DatasetEvent's dataset: Key and Publication
}

// RunJob is the job part of a run's event.
type RunJob struct {
	Key            string // the Job node's key
	Dbt            bool   // Key is a dbt node's job (ADR 0027)
	ProcessingType string
	DefHash        string // the hash of Def, "" when the event carries no definition
	Def            JobDef
}

// JobDef is a job definition an event carries.
type JobDef struct{ SQL, SourceCode, SourceLocation string }

// RunRef references a parent or root run.
type RunRef struct{ RunID, JobKey string }

// RunDataset is what one event says about a dataset the run read or wrote. Key is "" when the identifier was not
// resolved to a Dataset: the fold skips it.
type RunDataset struct {
	Key         string
	Version     string
	Scan        string                     // inputs: icebergScanReport.snapshotId as sent (ADR 0084), "" without
	Publication string                     // the headwater_publication state, upper case
	Facets      map[string]json.RawMessage // the event's inputFacets or outputFacets
	ColFields   map[string][]ColIn         // column lineage: output field -> its input fields
	ColDataset  []ColIn                    // column lineage: dataset-level dependencies
}

// ColIn is one input of a column-lineage mapping. DS is "" when the input's dataset was not resolved.
type ColIn struct {
	DS    string
	Field string
	TT    []olevent.Transformation
}

// RunIO is what a run read or wrote on one dataset, accumulated over its events.
type RunIO struct {
	FirstAt, LastAt int64
	Version         string
	// Scan is the latest icebergScanReport.snapshotId (as sent) of an input, by event order; "" without. The
	// projector matches it to the table's recorded snapshots (ADR 0084) and, on a match, sets Version to the
	// snapshot, Reported to the version the events named and ScanMatch to the outcome (fold.ScanMatched, ...).
	Scan, Reported, ScanMatch string
	Publication               string // outputs only (computed)
	Producer                  string
	EventIDs                  []string
	pubFacet                  string // latest headwater_publication state by event order
	Col                       *RunCols
	Facets                    map[string]json.RawMessage // input or output facets, per key latest by event order
}

// RunCols is a run's column lineage for one output dataset: mappings accumulated over its events.
type RunCols struct {
	Fields  map[ColPair]ColObs
	Dataset map[string]ColObs // input dataset key -> subtypes
}

// ColPair is one (input dataset, input field, output field) mapping.
type ColPair struct{ InKey, InField, OutField string }

// ColObs is when a mapping was first seen and the transformations of its latest event.
type ColObs struct {
	FirstAt int64
	TT      []olevent.Transformation
}

// RunState is the derived state of one run: a pure function of its events (FoldRun).
type RunState struct {
	Key, RunID, JobKey          string // Key: graph.RunKey(RunID, the key of the job name it was reported under)
	dbtJob                      bool   // JobKey is a dbt node's job (ADR 0027)
	State                       string
	Conflicting                 []string
	StartedAt, EndedAt          *int64
	FirstEventAt, LastEventTime int64
	NomStart, NomEnd            *int64
	Parent, Root                *RunRef
	ErrorMsg                    string
	Facets                      map[string]json.RawMessage
	ProcessingType              string
	DefHash                     string
	Def                         *JobDef
	Inputs, Outputs             map[string]*RunIO
	Producer                    string
}

// Streaming tells whether the run's job reports without terminal events.
func (s *RunState) Streaming() bool { return s.ProcessingType == "STREAMING" }

// SortEvents sorts events in the canonical order (Order.Before), keeping equal ones as given.
func SortEvents(evs []*RunEvent) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Before(evs[j].Order) })
}

// FoldRun computes a run's state from its events, whatever order they were given in.
func FoldRun(key string, events []RunEvent) *RunState {
	evs := make([]*RunEvent, len(events))
	for i := range events {
		evs[i] = &events[i]
	}
	SortEvents(evs)
	runID, jobKey := graph.SplitRunKey(key)
	s := &RunState{Key: key, RunID: runID, JobKey: jobKey, Inputs: map[string]*RunIO{}, Outputs: map[string]*RunIO{}}
	s.State, s.Conflicting, s.EndedAt = stateOf(evs)
	s.Facets = mergeFacets(evs)
	for _, e := range evs {
		foldMeta(s, e)
	}
	for _, e := range evs {
		foldIO(s, e)
	}
	for _, io := range s.Outputs {
		io.Publication = RunPub(s.State, s.Streaming(), io.pubFacet)
	}
	return s
}

// stateOf is the run state machine over ordered events.
func stateOf(evs []*RunEvent) (state string, conflicting []string, endedAt *int64) {
	terminals := map[string]bool{}
	state = olevent.TypeOther
	for _, e := range evs {
		if e.Kind != string(olevent.KindRun) {
			continue
		}
		switch {
		case IsTerminal(e.Type):
			if state != e.Type || endedAt == nil {
				t := e.Time
				endedAt = &t
			}
			state = e.Type
			terminals[e.Type] = true
		case e.Type == olevent.TypeStart || e.Type == olevent.TypeRunning:
			if !IsTerminal(state) && !(state == olevent.TypeRunning && e.Type == olevent.TypeStart) {
				state = e.Type
			}
		}
	}
	if len(terminals) > 1 {
		for t := range terminals {
			conflicting = append(conflicting, t)
		}
		sort.Strings(conflicting)
	}
	return state, conflicting, endedAt
}

// mergeFacets replaces run facets per key in event order; `_deleted` removes a key.
func mergeFacets(evs []*RunEvent) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, e := range evs {
		keys := make([]string, 0, len(e.Facets))
		for k := range e.Facets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = e.Facets[k]
		}
		for _, k := range e.Deleted {
			delete(out, k)
		}
	}
	return out
}

// foldMeta folds one event's run metadata; DatasetEvents that only carry publication for the run are skipped.
func foldMeta(s *RunState, e *RunEvent) {
	if e.Kind != string(olevent.KindRun) {
		return
	}
	if s.FirstEventAt == 0 || e.Time < s.FirstEventAt {
		s.FirstEventAt = e.Time
	}
	if e.Time > s.LastEventTime {
		s.LastEventTime = e.Time
	}
	if e.Type == olevent.TypeStart && (s.StartedAt == nil || e.Time < *s.StartedAt) {
		t := e.Time
		s.StartedAt = &t
	}
	s.Producer = e.Producer
	// The run's job: the dbt node job of its latest event that named one (ADR 0027), else the job it was named by.
	if e.Job.Dbt || !s.dbtJob {
		s.JobKey, s.dbtJob = e.Job.Key, e.Job.Dbt
	}
	if e.Job.ProcessingType != "" {
		s.ProcessingType = e.Job.ProcessingType
	}
	if e.Job.DefHash != "" {
		def := e.Job.Def
		s.DefHash, s.Def = e.Job.DefHash, &def
	}
	if e.Parent != nil {
		s.Parent = e.Parent
	}
	if e.Root != nil {
		s.Root = e.Root
	}
	if e.NomStart != nil {
		s.NomStart = e.NomStart
	}
	if e.NomEnd != nil {
		s.NomEnd = e.NomEnd
	}
	if e.ErrorMsg != "" {
		s.ErrorMsg = e.ErrorMsg
	}
}

func foldIO(s *RunState, e *RunEvent) {
	if e.Kind == string(olevent.KindDataset) {
		if e.Subject != nil && e.Subject.Key != "" && e.Subject.Publication != "" {
			if io := s.Outputs[e.Subject.Key]; io != nil {
				io.pubFacet = e.Subject.Publication
			}
		}
		return
	}
	for i := range e.Inputs {
		accumulate(s.Inputs, &e.Inputs[i], e)
	}
	for i := range e.Outputs {
		d := &e.Outputs[i]
		io := accumulate(s.Outputs, d, e)
		if io != nil && d.Publication != "" {
			io.pubFacet = d.Publication
		}
		if io != nil {
			addCols(io, d, e.Time)
		}
	}
}

func accumulate(m map[string]*RunIO, d *RunDataset, e *RunEvent) *RunIO {
	if d.Key == "" {
		return nil
	}
	io := m[d.Key]
	if io == nil {
		io = &RunIO{FirstAt: e.Time}
		m[d.Key] = io
	}
	if e.Time < io.FirstAt {
		io.FirstAt = e.Time
	}
	if e.Time > io.LastAt {
		io.LastAt = e.Time
	}
	if d.Version != "" {
		io.Version = d.Version
	}
	if d.Scan != "" {
		io.Scan = d.Scan
	}
	io.Producer = e.Producer
	io.EventIDs = LastFew(append(io.EventIDs, e.ID))
	for k, v := range d.Facets {
		if io.Facets == nil {
			io.Facets = map[string]json.RawMessage{}
		}
		io.Facets[k] = v
	}
	return io
}

func addCols(io *RunIO, d *RunDataset, t int64) {
	if len(d.ColFields) == 0 && len(d.ColDataset) == 0 {
		return
	}
	if io.Col == nil {
		io.Col = &RunCols{Fields: map[ColPair]ColObs{}, Dataset: map[string]ColObs{}}
	}
	for out, ins := range d.ColFields {
		for _, in := range ins {
			if in.DS != "" {
				p := ColPair{InKey: in.DS, InField: in.Field, OutField: out}
				io.Col.Fields[p] = mergeColObs(io.Col.Fields[p], t, in.TT)
			}
		}
	}
	perDataset := map[string][]olevent.Transformation{}
	for _, in := range d.ColDataset {
		if in.DS != "" {
			perDataset[in.DS] = append(perDataset[in.DS], in.TT...)
		}
	}
	for k, tt := range perDataset {
		io.Col.Dataset[k] = mergeColObs(io.Col.Dataset[k], t, tt)
	}
}

// mergeColObs keeps the first time and the transformations of the latest event (events come in order).
func mergeColObs(o ColObs, t int64, tt []olevent.Transformation) ColObs {
	if o.FirstAt == 0 || t < o.FirstAt {
		o.FirstAt = t
	}
	if len(tt) > 0 {
		o.TT = tt
	}
	return o
}
