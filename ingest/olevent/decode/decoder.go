package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/facets"
	"github.com/headwater-data/headwater/ingest/olevent/jsontree"
)

// ErrNoClock is returned by NewDecoder when no clock is injected.
var ErrNoClock = errors.New("olevent: decoder needs a clock")

// Decoder turns raw OpenLineage events into Events. It is safe for concurrent use.
type Decoder struct {
	lim     olevent.Limits
	now     func() time.Time
	schemas envelopeSchemas
}

// NewDecoder validates the limits and compiles the embedded envelope schema.
func NewDecoder(lim olevent.Limits, now func() time.Time) (*Decoder, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	if now == nil {
		return nil, ErrNoClock
	}
	s, err := compileEnvelope()
	if err != nil {
		return nil, err
	}
	return &Decoder{lim: lim, now: now, schemas: s}, nil
}

// wireEvent is the envelope as sent.
type wireEvent struct {
	EventID   string               `json:"eventId"`
	EventTime string               `json:"eventTime"`
	EventType string               `json:"eventType"`
	Producer  string               `json:"producer"`
	SchemaURL string               `json:"schemaURL"`
	Run       *facets.WireRun      `json:"run"`
	Job       *facets.WireJob      `json:"job"`
	Inputs    []facets.WireDataset `json:"inputs"`
	Outputs   []facets.WireDataset `json:"outputs"`
	Dataset   *facets.WireDataset  `json:"dataset"`
}

// Decode validates raw strictly on the envelope and tolerantly on facets. The error, when not nil, is a
// *ValidationError naming the field and the rule. Event.ID is left empty: call ResolveID.
func (d *Decoder) Decode(raw []byte) (olevent.Event, error) {
	ev, ve := d.decode(raw)
	if ve != nil {
		return olevent.Event{}, ve
	}
	return ev, nil
}

func (d *Decoder) decode(raw []byte) (olevent.Event, *olevent.ValidationError) {
	own := append([]byte(nil), raw...) // the Event keeps the bytes; its facets are spans of them
	t, ok := jsontree.Parse(own, d.treeLimits())
	if !ok || t.Kind(t.Root()) != jsontree.Object {
		return olevent.Event{}, d.explain(raw)
	}
	defer t.Release() // the Event keeps strings and spans, none of the tree
	obj := envelopeDoc(t)
	if ve := checkFieldCase(obj); ve != nil {
		return olevent.Event{}, ve
	}
	kind, ve := shapeOf(obj)
	if ve != nil {
		return olevent.Event{}, ve
	}
	if ve := d.schemas.validate(kind, obj); ve != nil {
		return olevent.Event{}, ve
	}
	w, bad := wireFrom(t)
	if bad != "" {
		return olevent.Event{}, invalid("$", olevent.RuleType, "the event does not match the OpenLineage envelope: %s", bad)
	}
	ev, ve := d.build(kind, &w, own)
	if ve == nil {
		ev.SetContentDigest(treeID(t))
	}
	return ev, ve
}

func (d *Decoder) treeLimits() jsontree.Limits {
	return jsontree.Limits{MaxDepth: d.lim.MaxJSONDepth, MaxString: d.lim.MaxStringBytes}
}

// explain names the field and rule of an event the single pass refused: the token walk (scanner) finds the
// first defect in document order, as it did when it was the only check. Refusals are rare; accepted events never
// come here. The walk can miss one defect the pass finds: invalid UTF-8 or a lone surrogate escape after a string
// with escapes (the token decoder unescapes in place, so its input offset lags the byte offset lex reported); the
// walk let such events through, the pass refuses them, at the document root (ADR 0037). Should the walk find
// nothing else (the pass and the walk disagree, which the differential tests exclude), the event is still refused
// as not valid JSON.
func (d *Decoder) explain(raw []byte) *olevent.ValidationError {
	if ve := (&scanner{lim: d.lim}).run(raw); ve != nil {
		return ve
	}
	if bad := lex(raw, d.lim.MaxJSONDepth); bad.rule == olevent.RuleUTF8 {
		return invalid("$", olevent.RuleUTF8, "the event has a string that is not valid UTF-8 (byte offset %d): JSON text must be UTF-8", bad.off)
	}
	return invalid("$", olevent.RuleJSON, "the event is not valid JSON")
}

// DecodeValidated decodes an event this system validated already (the gateway's own topic, where the gateway
// wrote only events Decode accepted). It skips the limits, the envelope checks, the JSON Schema and the content
// id (the caller has the event id) and interprets the event exactly like Decode: the same build, facets and time
// bounds. Events of any other origin must go through Decode.
func (d *Decoder) DecodeValidated(raw []byte) (olevent.Event, error) {
	own := append([]byte(nil), raw...)
	t, ok := jsontree.Parse(own, jsontree.Limits{MaxDepth: olevent.MaxSyntaxDepth, MaxString: len(own)})
	if !ok || t.Kind(t.Root()) != jsontree.Object {
		return olevent.Event{}, invalid("$", olevent.RuleType, "the event does not match the OpenLineage envelope: not one JSON object")
	}
	defer t.Release()
	w, bad := wireFrom(t)
	if bad != "" {
		return olevent.Event{}, invalid("$", olevent.RuleType, "the event does not match the OpenLineage envelope: %s", bad)
	}
	kind := olevent.KindDataset
	switch {
	case w.Run != nil:
		kind = olevent.KindRun
	case w.Job != nil:
		kind = olevent.KindJob
	}
	ev, ve := d.build(kind, &w, own)
	if ve != nil {
		return olevent.Event{}, ve
	}
	return ev, nil
}

// shapeOf tells the three event shapes apart: run => RunEvent, job without run => JobEvent, dataset without
// run and job => DatasetEvent. A dataset next to a run or job is ambiguous and rejected.
func shapeOf(obj map[string]any) (olevent.Kind, *olevent.ValidationError) {
	_, hasRun := obj["run"]
	_, hasJob := obj["job"]
	_, hasDataset := obj["dataset"]
	switch {
	case hasDataset && (hasRun || hasJob):
		return "", invalid("dataset", olevent.RuleShape,
			"dataset is only allowed on a DatasetEvent, which has no run or job; this event has both")
	case hasRun:
		return olevent.KindRun, nil
	case hasJob:
		return olevent.KindJob, nil
	case hasDataset:
		return olevent.KindDataset, nil
	}
	return "", invalid("$", olevent.RuleShape,
		"the event must have run and job (RunEvent), job (JobEvent) or dataset (DatasetEvent)")
}

// build interprets the envelope and its facets; the Event keeps raw (the decoder's own copy) as its Raw.
func (d *Decoder) build(kind olevent.Kind, w *wireEvent, raw json.RawMessage) (olevent.Event, *olevent.ValidationError) {
	t, ve := d.checkTime(w.EventTime)
	if ve != nil {
		return olevent.Event{}, ve
	}
	if ve := d.checkCounts(w); ve != nil {
		return olevent.Event{}, ve
	}
	ev := olevent.Event{
		Kind: kind, EventTime: t, Producer: w.Producer, SchemaURL: w.SchemaURL,
		EnvelopeID: w.EventID, Raw: raw,
	}
	switch kind {
	case olevent.KindRun:
		ev.EventType = w.EventType
		if ev.EventType == "" {
			ev.EventType = olevent.TypeOther // eventType is optional in spec 2-0-2; no transition means metadata only
		}
		ev.Run = facets.BuildRun(w.Run, &ev.FacetIssues)
		fallthrough
	case olevent.KindJob:
		ev.Job = facets.BuildJob(w.Job, &ev.FacetIssues)
		ev.Inputs = buildDatasets(w.Inputs, "inputs", &ev.FacetIssues)
		ev.Outputs = buildDatasets(w.Outputs, "outputs", &ev.FacetIssues)
	case olevent.KindDataset:
		ds := facets.BuildDataset(w.Dataset, "dataset", &ev.FacetIssues)
		ev.Dataset = &ds
	}
	facets.ResolveMetadataTables(&ev)
	return ev, nil
}

func buildDatasets(ws []facets.WireDataset, path string, issues *[]olevent.FacetIssue) []olevent.Dataset {
	if len(ws) == 0 {
		return nil
	}
	out := make([]olevent.Dataset, 0, len(ws))
	for i := range ws {
		out = append(out, facets.BuildDataset(&ws[i], fmt.Sprintf("%s[%d]", path, i), issues))
	}
	return out
}

// checkTime parses eventTime (format already checked by the schema) and applies the future/horizon bounds.
func (d *Decoder) checkTime(s string) (time.Time, *olevent.ValidationError) {
	t, err := facets.ParseTime(s)
	if err != nil {
		return time.Time{}, invalid("eventTime", olevent.RuleFormat, "eventTime must be an RFC 3339 date-time with a time-zone offset, got %q", facets.Truncate(s))
	}
	now := d.now()
	if t.After(now.Add(d.lim.MaxFuture)) {
		return time.Time{}, invalid("eventTime", olevent.RuleTooFarInFuture,
			"eventTime %s is more than %s after the server time %s", s, d.lim.MaxFuture, now.UTC().Format(time.RFC3339))
	}
	if t.Before(now.Add(-d.lim.Horizon)) {
		return time.Time{}, invalid("eventTime", olevent.RuleBeforeHorizon,
			"eventTime %s is more than %s before the server time %s", s, d.lim.Horizon, now.UTC().Format(time.RFC3339))
	}
	return t.UTC(), nil
}

// invalid builds the ValidationError of one envelope field and rule.
func invalid(field, rule, format string, args ...any) *olevent.ValidationError {
	return &olevent.ValidationError{Field: field, Rule: rule, Message: fmt.Sprintf(format, args...)}
}
