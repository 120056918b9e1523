package gen

import "maps"

// Stats are the shape statistics an operator compares with real traffic to recalibrate the generator.
// Runs and output counts are counted when a run is planned; event counts and bytes when an event is emitted.
type Stats struct {
	Events                   int            `json:"events"`
	ByKind                   map[string]int `json:"byKind"`
	ByType                   map[string]int `json:"byEventType"`
	Bytes                    int64          `json:"bytes"`
	MaxBytes                 int            `json:"maxBytes"`
	Late                     int            `json:"late"`
	Duplicates               int            `json:"duplicates"`
	Runs                     int            `json:"runs"`
	RunsDone                 int            `json:"runsDone"`       // runs whose every event has been emitted
	RunsDoneEvents           int            `json:"runsDoneEvents"` // their run events (duplicates excluded)
	Fails                    int            `json:"fails"`
	Aborts                   int            `json:"aborts"`
	Retries                  int            `json:"retries"`
	Streaming                int            `json:"streamingReports"`
	Renames                  int            `json:"renames"`
	Outputs                  int            `json:"outputs"`
	OutputsWithColumnLineage int            `json:"outputsWithColumnLineage"`
}

func newStats() Stats { return Stats{ByKind: map[string]int{}, ByType: map[string]int{}} }

func (s *Stats) observe(ev Event) {
	s.Events++
	s.ByKind[ev.Kind]++
	if ev.EventType != "" {
		s.ByType[ev.EventType]++
	}
	s.Bytes += int64(len(ev.Body))
	s.MaxBytes = max(s.MaxBytes, len(ev.Body))
	if ev.Late {
		s.Late++
	}
	if ev.Duplicate {
		s.Duplicates++
	}
}

func (s Stats) clone() Stats {
	s.ByKind = maps.Clone(s.ByKind)
	s.ByType = maps.Clone(s.ByType)
	return s
}

// ColumnLineageShare is the share of run outputs that carry a columnLineage facet.
func (s Stats) ColumnLineageShare() float64 {
	if s.Outputs == 0 {
		return 0
	}
	return float64(s.OutputsWithColumnLineage) / float64(s.Outputs)
}

// EventsPerRun is run events (duplicates excluded) per run, over runs whose every event was emitted (a
// streaming job's hourly report counts as one run).
func (s Stats) EventsPerRun() float64 {
	if s.RunsDone == 0 {
		return 0
	}
	return float64(s.RunsDoneEvents) / float64(s.RunsDone)
}

// MeanBytes is the mean payload size.
func (s Stats) MeanBytes() float64 {
	if s.Events == 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.Events)
}
