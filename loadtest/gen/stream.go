package gen

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

const (
	maxLateness  = 30 * time.Minute // a late event arrives up to this long after its eventTime
	maxDupDelay  = 2 * time.Minute  // a duplicate arrives up to this long after the original
	streamPeriod = 5 * time.Minute  // a streaming job reports RUNNING this often
	day          = 24 * time.Hour
)

// Event is one generated event in delivery order.
type Event struct {
	Body      []byte    // the JSON document as a producer sends it
	Key       string    // Kafka key as the OpenLineage Kafka transport forms it
	Kind      string    // RUN, JOB or DATASET
	EventType string    // RunEvents only
	RunID     string    // RunEvents only
	EventTime time.Time // the event's eventTime
	EmitAt    time.Time // simulated delivery time (EventTime, or later for late and duplicate deliveries)
	Late      bool
	Duplicate bool
	plan      int // which planned run (or streaming report) it belongs to; 0 for Job and Dataset events
}

// Stream walks simulated time over a World and yields events in delivery order. Not safe for concurrent use.
type Stream struct {
	w           *World
	runs, ids   *rand.Rand
	delivery    *rand.Rand
	cum         []float64
	nextRunAt   time.Time
	runInterval time.Duration
	pending     eventHeap
	seq         int
	names       map[int]string // dataset id -> current name after renames
	streamRuns  map[int]string // streaming job -> its long-lived runId
	stats       Stats
	plan        int         // current plan number
	planEvents  map[int]int // plan -> run events planned
	planLeft    map[int]int // plan -> run events not yet emitted
}

// NewStream starts a stream at Config.Start.
func (w *World) NewStream() *Stream {
	c := w.Config
	// Run ids depend on the start too: a second stream over the same world (a later benchmark run) makes new runs
	// rather than re-running the first stream's run ids at other times.
	salt := hash64(c.Prefix) ^ uint64(c.Start.UnixNano())
	s := &Stream{w: w, runs: newRand(c.Seed, streamRuns), ids: newRand(c.Seed^salt, streamIDs),
		delivery: newRand(c.Seed, streamDelivery), nextRunAt: c.Start,
		runInterval: day / time.Duration(c.RunsPerDay), names: map[int]string{}, streamRuns: map[int]string{},
		stats: newStats(), planEvents: map[int]int{}, planLeft: map[int]int{}}
	total := 0.0
	for _, j := range w.Jobs {
		total += j.Weight
		s.cum = append(s.cum, total)
	}
	return s
}

// Next returns the next event in delivery order. The stream never ends.
func (s *Stream) Next() Event {
	for s.pending.Len() == 0 || s.pending[0].EmitAt.After(s.nextRunAt) {
		s.planRun(s.nextRunAt)
		s.nextRunAt = s.nextRunAt.Add(s.runInterval)
	}
	return s.pop()
}

// NextPending returns the next event already planned (the rest of the runs started so far) without starting new
// runs; false when there is none. A stream that was asked for NextPending should not be asked for Next again.
func (s *Stream) NextPending() (Event, bool) {
	if s.pending.Len() == 0 {
		return Event{}, false
	}
	return s.pop(), true
}

// pop takes the next planned event in delivery order and counts it.
func (s *Stream) pop() Event {
	ev := heap.Pop(&s.pending).(*queued).Event
	s.stats.observe(ev)
	s.completeRun(ev)
	return ev
}

// Stats returns the shape statistics of what the stream has planned and emitted so far.
func (s *Stream) Stats() Stats { return s.stats.clone() }

// Name is the current name of a dataset (after any renames the stream has emitted).
func (s *Stream) Name(id int) string {
	if n, ok := s.names[id]; ok {
		return n
	}
	return s.w.Datasets[id].Name
}

func (s *Stream) pickJob() *Job {
	x := s.runs.Float64() * s.cum[len(s.cum)-1]
	i := sort.SearchFloat64s(s.cum, x)
	return &s.w.Jobs[min(i, len(s.cum)-1)]
}

// push queues an event for delivery, maybe late, maybe twice.
func (s *Stream) push(ev Event) {
	ev.EmitAt = ev.EventTime
	if s.delivery.Float64() < s.w.Config.LateShare {
		ev.Late = true
		ev.EmitAt = ev.EventTime.Add(time.Duration(1 + s.delivery.Int64N(int64(maxLateness))))
	}
	s.enqueue(ev)
	if s.delivery.Float64() < s.w.Config.DupShare {
		dup := ev
		dup.Duplicate = true
		dup.EmitAt = ev.EmitAt.Add(time.Duration(1 + s.delivery.Int64N(int64(maxDupDelay))))
		s.enqueue(dup)
	}
}

// completeRun counts a run (or streaming report) once all its run events are emitted, so events per run is
// not biased by runs the window cut.
func (s *Stream) completeRun(ev Event) {
	if ev.plan == 0 || ev.Duplicate {
		return
	}
	s.planLeft[ev.plan]--
	if s.planLeft[ev.plan] > 0 {
		return
	}
	s.stats.RunsDone++
	s.stats.RunsDoneEvents += s.planEvents[ev.plan]
	delete(s.planLeft, ev.plan)
	delete(s.planEvents, ev.plan)
}

func (s *Stream) enqueue(ev Event) {
	s.seq++
	heap.Push(&s.pending, &queued{Event: ev, seq: s.seq})
}

// encode marshals an event; the wire types contain only marshalable values, so an error is a programming error.
func encode(e *olEvent) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("gen: marshal event: %v", err))
	}
	return b
}

type queued struct {
	Event
	seq int
}

type eventHeap []*queued

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].EmitAt.Equal(h[j].EmitAt) {
		return h[i].EmitAt.Before(h[j].EmitAt)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*queued)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
