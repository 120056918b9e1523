package trust

import (
	"time"

	"github.com/headwater-data/headwater/trust/rules"
)

// Signal names a figure (the `signal` label of the metrics).
type Signal string

// Signals.
const (
	SignalJobsReporting        Signal = "jobs_reporting"
	SignalJobsInstrumented     Signal = "jobs_instrumented"
	SignalRunsWithoutTerminal  Signal = "runs_without_terminal"
	SignalQuietProducers       Signal = "quiet_producers"
	SignalRejectedEvents       Signal = "rejected_events"
	SignalUnresolvedIdentities Signal = "unresolved_identities"
	SignalEdgeFreshness        Signal = "edge_freshness"
	SignalColumnLineage        Signal = "column_lineage"
	SignalCanaries             Signal = "canaries"
	SignalReportedWrites       Signal = "reported_writes"
)

// Signals lists every signal in a fixed order.
func Signals() []Signal {
	return []Signal{SignalJobsReporting, SignalJobsInstrumented, SignalRunsWithoutTerminal, SignalQuietProducers,
		SignalRejectedEvents, SignalUnresolvedIdentities, SignalEdgeFreshness, SignalColumnLineage, SignalCanaries,
		SignalReportedWrites}
}

// ItemKind says what an item behind a figure is.
type ItemKind string

// Item kinds.
const (
	ItemExpectedJob ItemKind = "EXPECTED_JOB"
	ItemRun         ItemKind = "RUN"
	ItemProducer    ItemKind = "PRODUCER"
	ItemRejection   ItemKind = "REJECTION"
	ItemIdentity    ItemKind = "UNRESOLVED_IDENTITY"
	ItemEdge        ItemKind = "EDGE"
	ItemDataset     ItemKind = "DATASET"
	ItemCanary      ItemKind = "CANARY"
)

// Item is one named thing behind a figure (the part of the numerator or denominator a person acts on).
type Item struct {
	Kind        ItemKind
	JobKeys     []string // reported jobs (an expected job's matches, a run's or an edge's job)
	RunKey      string
	DatasetKeys []string // an edge's input and output, a dataset
	Namespace   string
	Name        string
	Criticality string
	Status      string
	Source      string
	Producer    string
	Reason      string
	Count       int64
	Since       time.Time // last reported, run started, last event, last observed
	Message     string
}

// Group is a figure restricted to one value of a dimension.
type Group struct {
	Dimension   string // namespace, criticality, producer, rule
	Key         string
	Numerator   int
	Denominator int
}

// Figure is one signal: Numerator of Denominator in Window, and the items behind it (at most MaxItemsKept;
// Omitted counts the rest).
type Figure struct {
	Signal      Signal
	Numerator   int
	Denominator int
	Window      time.Duration // 0: a figure about now, not about a window
	Description string
	Items       []Item
	Omitted     int
	Groups      []Group
	rep         *Report // the report it belongs to (for its trend)
}

// Ratio is Numerator / Denominator, or nil without a denominator.
func (f *Figure) Ratio() *float64 {
	if f.Denominator == 0 {
		return nil
	}
	r := float64(f.Numerator) / float64(f.Denominator)
	return &r
}

func (f *Figure) add(it Item) {
	if len(f.Items) >= MaxItemsKept {
		f.Omitted++
		return
	}
	f.Items = append(f.Items, it)
}

// grouper accumulates groups of one figure in first-seen order.
type grouper struct {
	order []string
	by    map[string]*Group
}

func (g *grouper) add(dim, key string, num, den int) {
	if g.by == nil {
		g.by = map[string]*Group{}
	}
	k := dim + "\x1f" + key
	gr, ok := g.by[k]
	if !ok {
		gr = &Group{Dimension: dim, Key: key}
		g.by[k] = gr
		g.order = append(g.order, k)
	}
	gr.Numerator += num
	gr.Denominator += den
}

func (g *grouper) groups() []Group {
	out := make([]Group, 0, len(g.order))
	for _, k := range g.order {
		out = append(out, *g.by[k])
	}
	return out
}

func age(d time.Duration) string { return rules.Age(d) }
