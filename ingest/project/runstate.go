package project

import (
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Run lifecycle lifecycle-state names from the lifecycleStateChange facet.
const (
	lcCreate    = "CREATE"
	lcDrop      = "DROP"
	lcRename    = "RENAME"
	lcOverwrite = "OVERWRITE"
	lcTruncate  = "TRUNCATE"
)

// eventLess is the canonical event order: eventTime; ties: terminal after non-terminal, then receive time, then
// eventId.
func eventLess(a, b *rec) bool {
	if a.Time != b.Time {
		return a.Time < b.Time
	}
	if ta, tb := fold.IsTerminal(a.Type), fold.IsTerminal(b.Type); ta != tb {
		return tb
	}
	if a.Recv != b.Recv {
		return a.Recv < b.Recv
	}
	return a.ID < b.ID
}

func sortEvents(evs []*rec) {
	sort.SliceStable(evs, func(i, j int) bool { return eventLess(evs[i], evs[j]) })
}

// runIO is what a run read or wrote on one dataset, accumulated over its events.
type runIO struct {
	FirstAt, LastAt int64
	Version         string
	Publication     string // outputs only (computed)
	Producer        string
	EventIDs        []string
	pubFacet        string // latest headwater_publication state by event order
	Col             *runCols
	Facets          map[string]json.RawMessage // input or output facets, per key latest by event order
}

// runCols is a run's column lineage for one output dataset: mappings accumulated over its events.
type runCols struct {
	Fields  map[colPair]colObs
	Dataset map[string]colObs // input dataset key -> subtypes
}

// colPair is one (input dataset, input field, output field) mapping.
type colPair struct{ InKey, InField, OutField string }

type colObs struct {
	FirstAt int64
	TT      []olevent.Transformation
}

// runState is the derived state of one run: a pure function of its events (foldRun).
type runState struct {
	Key, RunID, JobKey          string // Key: graph.RunKey(RunID, the key of the job name it was reported under)
	dbtJob                      bool   // JobKey is a dbt node's job (ADR 0027)
	State                       string
	Conflicting                 []string
	StartedAt, EndedAt          *int64
	FirstEventAt, LastEventTime int64
	NomStart, NomEnd            *int64
	Parent, Root                *parentRec
	ErrorMsg                    string
	Facets                      map[string]json.RawMessage
	ProcessingType              string
	DefHash                     string
	Def                         *jobRec
	Inputs, Outputs             map[string]*runIO
	Producer                    string
}

// Streaming tells whether the run's job reports without terminal events.
func (s *runState) Streaming() bool { return s.ProcessingType == "STREAMING" }

// foldRun computes a run's state from its events, whatever order they were given in.
func foldRun(key string, events []*rec) *runState {
	evs := append([]*rec(nil), events...)
	sortEvents(evs)
	runID, jobKey := graph.SplitRunKey(key)
	s := &runState{Key: key, RunID: runID, JobKey: jobKey, Inputs: map[string]*runIO{}, Outputs: map[string]*runIO{}}
	s.State, s.Conflicting, s.EndedAt = stateOf(evs)
	s.Facets = mergeFacets(evs)
	for _, e := range evs {
		foldMeta(s, e)
	}
	for _, e := range evs {
		foldIO(s, e)
	}
	for _, io := range s.Outputs {
		io.Publication = outputPublication(s, io.pubFacet)
	}
	return s
}

// stateOf is the run state machine over ordered events.
func stateOf(evs []*rec) (state string, conflicting []string, endedAt *int64) {
	terminals := map[string]bool{}
	state = olevent.TypeOther
	for _, e := range evs {
		if e.Kind != string(olevent.KindRun) {
			continue
		}
		switch {
		case fold.IsTerminal(e.Type):
			if state != e.Type || endedAt == nil {
				t := e.Time
				endedAt = &t
			}
			state = e.Type
			terminals[e.Type] = true
		case e.Type == olevent.TypeStart || e.Type == olevent.TypeRunning:
			if !fold.IsTerminal(state) && !(state == olevent.TypeRunning && e.Type == olevent.TypeStart) {
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
func mergeFacets(evs []*rec) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, e := range evs {
		keys := make([]string, 0, len(e.RunFacets))
		for k := range e.RunFacets {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = e.RunFacets[k]
		}
		for _, k := range e.Deleted {
			delete(out, k)
		}
	}
	return out
}

// foldMeta folds one event's run metadata; DatasetEvents that only carry publication for the run are skipped.
func foldMeta(s *runState, e *rec) {
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
	if e.Job.DbtRole != "" || !s.dbtJob {
		s.JobKey, s.dbtJob = e.Job.Key, e.Job.DbtRole != ""
	}
	if e.Job.ProcessingType != "" {
		s.ProcessingType = e.Job.ProcessingType
	}
	if h := e.Job.defHash(); h != "" {
		s.DefHash, s.Def = h, e.Job
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

func foldIO(s *runState, e *rec) {
	if e.Kind == string(olevent.KindDataset) {
		if e.Subject != nil && e.Subject.ID.ok() && e.Subject.Publication != "" {
			if io := s.Outputs[e.Subject.ID.Key]; io != nil {
				io.pubFacet = e.Subject.Publication
			}
		}
		return
	}
	for _, d := range e.Inputs {
		accumulate(s.Inputs, d, e)
	}
	for _, d := range e.Outputs {
		io := accumulate(s.Outputs, d, e)
		if io != nil && d.Publication != "" {
			io.pubFacet = d.Publication
		}
		if io != nil {
			addCols(io, d, e.Time)
		}
	}
}

func accumulate(m map[string]*runIO, d *dsRec, e *rec) *runIO {
	if !d.ID.ok() {
		return nil
	}
	io := m[d.ID.Key]
	if io == nil {
		io = &runIO{FirstAt: e.Time}
		m[d.ID.Key] = io
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
	io.Producer = e.Producer
	io.EventIDs = fold.LastFew(append(io.EventIDs, e.ID))
	for k, v := range d.IOFacets {
		if io.Facets == nil {
			io.Facets = map[string]json.RawMessage{}
		}
		io.Facets[k] = v
	}
	return io
}

func addCols(io *runIO, d *dsRec, t int64) {
	if len(d.ColFields) == 0 && len(d.ColDataset) == 0 {
		return
	}
	if io.Col == nil {
		io.Col = &runCols{Fields: map[colPair]colObs{}, Dataset: map[string]colObs{}}
	}
	for out, ins := range d.ColFields {
		for _, in := range ins {
			if in.DS.ok() {
				p := colPair{InKey: in.DS.Key, InField: in.Field, OutField: out}
				io.Col.Fields[p] = mergeColObs(io.Col.Fields[p], t, in.TT)
			}
		}
	}
	perDataset := map[string][]olevent.Transformation{}
	for _, in := range d.ColDataset {
		if in.DS.ok() {
			perDataset[in.DS.Key] = append(perDataset[in.DS.Key], in.TT...)
		}
	}
	for k, tt := range perDataset {
		io.Col.Dataset[k] = mergeColObs(io.Col.Dataset[k], t, tt)
	}
}

// mergeColObs keeps the first time and the transformations of the latest event (events come in order).
func mergeColObs(o colObs, t int64, tt []olevent.Transformation) colObs {
	if o.FirstAt == 0 || t < o.FirstAt {
		o.FirstAt = t
	}
	if len(tt) > 0 {
		o.TT = tt
	}
	return o
}

// outputPublication is the per-run publication of an output.
func outputPublication(s *runState, facet string) string {
	return fold.RunPub(s.State, s.Streaming(), facet)
}

func encodeCols(c *runCols) string {
	var d fold.ColsDoc
	for p, o := range c.Fields {
		d.Fields = append(d.Fields, fold.ColField{In: p.InKey, InField: p.InField, Out: p.OutField, FirstAt: o.FirstAt, TT: o.TT})
	}
	sort.Slice(d.Fields, func(i, j int) bool {
		a, b := d.Fields[i], d.Fields[j]
		if a.Out != b.Out {
			return a.Out < b.Out
		}
		if a.In != b.In {
			return a.In < b.In
		}
		return a.InField < b.InField
	})
	for k, o := range c.Dataset {
		d.Dataset = append(d.Dataset, fold.ColDep{In: k, FirstAt: o.FirstAt, TT: o.TT})
	}
	sort.Slice(d.Dataset, func(i, j int) bool { return d.Dataset[i].In < d.Dataset[j].In })
	b, _ := json.Marshal(d)
	return string(b)
}
