package gen

import (
	"fmt"
	"strconv"
	"time"
)

// Run outcomes.
const (
	outcomeComplete = iota
	outcomeFail
	outcomeAbort
	outcomeRetry
)

// runPlan is one run being turned into events.
type runPlan struct {
	job      *Job
	id       string
	start    time.Time
	end      time.Time
	producer string
	parent   map[string]any // parent facet, nil when none
	nominal  time.Time
	renamed  int // output index renamed on this run, -1 when none
}

func (s *Stream) planRun(at time.Time) {
	j := s.pickJob()
	s.stats.Runs++
	s.plan++
	if j.Streaming {
		s.planStreaming(j, at)
		return
	}
	p := s.newPlan(j, at)
	switch s.outcome() {
	case outcomeFail:
		s.stats.Fails++
		s.emitFailed(p, "FAIL")
	case outcomeAbort:
		s.stats.Aborts++
		s.emitFailed(p, "ABORT")
	case outcomeRetry:
		s.stats.Retries++
		s.emitRetry(p)
	default:
		s.emitComplete(p)
	}
	s.maybeSideEvents(p)
}

func (s *Stream) outcome() int {
	x, c := s.runs.Float64(), s.w.Config
	switch {
	case x < c.FailShare:
		return outcomeFail
	case x < c.FailShare+c.AbortShare:
		return outcomeAbort
	case x < c.FailShare+c.AbortShare+c.RetryShare:
		return outcomeRetry
	}
	return outcomeComplete
}

func (s *Stream) newPlan(j *Job, at time.Time) *runPlan {
	dur := time.Minute + time.Duration(s.runs.Int64N(int64(29*time.Minute)))
	if j.Integration == IntegrationSpark {
		dur *= 2
	}
	p := &runPlan{job: j, id: uuidFrom(s.ids), start: at, end: at.Add(dur),
		producer: producerURI(j.Integration), renamed: -1}
	slotLen := time.Duration(float64(day) / j.Weight)
	p.nominal = at.Truncate(slotLen)
	if j.ParentName != "" {
		slot := strconv.FormatInt(p.nominal.UnixMilli(), 10)
		seed := strconv.FormatUint(s.w.Config.Seed, 10)
		parentID := uuidOf(s.w.Config.Prefix, seed, j.ParentNS, j.ParentName, slot)
		rootID := uuidOf(s.w.Config.Prefix, seed, j.RootNS, j.RootName, slot)
		ref := parentRef(parentID, j.ParentNS, j.ParentName)
		ref["root"] = parentRef(rootID, j.RootNS, j.RootName)
		p.parent = facet(p.producer, "1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet", ref)
	}
	if s.runs.Float64() < s.w.Config.RenameShare {
		p.renamed = s.runs.IntN(len(j.Outputs))
	}
	return p
}

// emitComplete: START, 0-2 RUNNING, COMPLETE; a renaming run lists the renamed output only on COMPLETE.
func (s *Stream) emitComplete(p *runPlan) {
	s.runEvent(p, "START", p.start, s.inputs(p, false), s.outputs(p, false, -1), nil)
	running := 0
	if x := s.runs.Float64(); x < 0.1 {
		running = 2
	} else if x < 0.4 {
		running = 1
	}
	for i := 1; i <= running; i++ {
		at := p.start.Add(p.end.Sub(p.start) * time.Duration(i) / time.Duration(running+1))
		s.runEvent(p, "RUNNING", at, nil, nil, nil)
	}
	outs := s.outputs(p, true, -1)
	s.countOutputs(p, len(p.job.Outputs))
	s.runEvent(p, "COMPLETE", p.end, s.inputs(p, true), outs, nil)
}

// emitFailed: START (all outputs), maybe RUNNING, FAIL/ABORT with a partial output list and an error message.
func (s *Stream) emitFailed(p *runPlan, terminal string) {
	p.renamed = -1
	s.runEvent(p, "START", p.start, s.inputs(p, false), s.outputs(p, false, -1), nil)
	if s.runs.IntN(2) == 0 {
		s.runEvent(p, "RUNNING", p.start.Add(p.end.Sub(p.start)/2), nil, nil, nil)
	}
	keep := max(1, len(p.job.Outputs)/2)
	s.countOutputs(p, keep)
	s.runEvent(p, terminal, p.end, s.inputs(p, true), s.outputs(p, true, keep), s.errorFacet(p, terminal))
}

// emitRetry: the same runId attempted twice: START, FAIL, START, COMPLETE.
func (s *Stream) emitRetry(p *runPlan) {
	p.renamed = -1
	mid := p.start.Add(p.end.Sub(p.start) / 3)
	s.runEvent(p, "START", p.start, s.inputs(p, false), s.outputs(p, false, -1), nil)
	s.runEvent(p, "FAIL", mid, s.inputs(p, false), nil, s.errorFacet(p, "FAIL"))
	s.runEvent(p, "START", mid.Add(time.Minute), s.inputs(p, false), s.outputs(p, false, -1), nil)
	s.countOutputs(p, len(p.job.Outputs))
	s.runEvent(p, "COMPLETE", p.end.Add(time.Minute), s.inputs(p, true), s.outputs(p, true, -1), nil)
}

// planStreaming: a streaming job keeps one runId and reports RUNNING snapshots, never a terminal event.
func (s *Stream) planStreaming(j *Job, at time.Time) {
	s.stats.Streaming++
	p := &runPlan{job: j, start: at, producer: producerURI(j.Integration), renamed: -1}
	id, started := s.streamRuns[j.ID]
	if !started {
		id = uuidFrom(s.ids)
		s.streamRuns[j.ID] = id
	}
	p.id = id
	n := 2 + s.runs.IntN(2)
	s.countOutputs(p, len(j.Outputs))
	for i := range n {
		typ := "RUNNING"
		if i == 0 && !started {
			typ = "START"
		}
		s.runEvent(p, typ, at.Add(time.Duration(i)*streamPeriod), s.inputs(p, i == 0), s.outputs(p, i == 0, -1), nil)
	}
}

func (s *Stream) errorFacet(p *runPlan, terminal string) map[string]any {
	msg := fmt.Sprintf("%s: task %s exited with status 1", terminal, p.job.Name)
	return facet(p.producer, "1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
		map[string]any{"message": msg, "programmingLanguage": "python"})
}

func (s *Stream) countOutputs(p *runPlan, n int) {
	for k := range n {
		s.stats.Outputs++
		if k < len(p.job.ColumnLineage) && p.job.ColumnLineage[k] {
			s.stats.OutputsWithColumnLineage++
		}
	}
}
