package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	facets "github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle/ofacets"

	fastjson "github.com/goccy/go-json"
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
	if ve := (&scanner{lim: d.lim}).run(raw); ve != nil {
		return olevent.Event{}, ve
	}
	doc, err := parseDoc(raw)
	if err != nil {
		return olevent.Event{}, invalid("$", olevent.RuleJSON, "the event is not valid JSON: %v", err)
	}
	obj, _ := doc.(map[string]any) // the scanner guaranteed an object
	if ve := checkFieldCase(obj); ve != nil {
		return olevent.Event{}, ve
	}
	kind, ve := shapeOf(obj)
	if ve != nil {
		return olevent.Event{}, ve
	}
	if ve := d.schemas.validate(kind, doc); ve != nil {
		return olevent.Event{}, ve
	}
	var w wireEvent
	if err := fastjson.Unmarshal(raw, &w); err != nil {
		return olevent.Event{}, invalid("$", olevent.RuleType, "the event does not match the OpenLineage envelope: %v", err)
	}
	ev, ve := d.build(kind, &w, raw)
	if ve == nil {
		ev.SetContentDigest(olevent.DocumentID(doc))
	}
	return ev, ve
}

// DecodeValidated decodes an event this system validated already (the gateway's own topic, where the gateway
// wrote only events Decode accepted). It skips the limits scan, the JSON Schema and the content id (the caller
// has the event id) and interprets the event exactly like Decode: the same build, facets and time bounds. Events
// of any other origin must go through Decode.
func (d *Decoder) DecodeValidated(raw []byte) (olevent.Event, error) {
	var w wireEvent
	if err := fastjson.Unmarshal(raw, &w); err != nil {
		return olevent.Event{}, invalid("$", olevent.RuleType, "the event does not match the OpenLineage envelope: %v", err)
	}
	kind := olevent.KindDataset
	switch {
	case w.Run != nil:
		kind = olevent.KindRun
	case w.Job != nil:
		kind = olevent.KindJob
	}
	ev, ve := d.build(kind, &w, raw)
	if ve != nil {
		return olevent.Event{}, ve
	}
	return ev, nil
}

// parseDoc parses the event into the generic tree the JSON Schema validator reads (numbers as json.Number, like
// jsonschema.UnmarshalJSON) with goccy/go-json, which is several times faster than encoding/json at it. The scanner
// ran first, so raw is one well-formed object with nothing after it.
func parseDoc(raw []byte) (any, error) {
	dec := fastjson.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
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

func (d *Decoder) build(kind olevent.Kind, w *wireEvent, raw []byte) (olevent.Event, *olevent.ValidationError) {
	t, ve := d.checkTime(w.EventTime)
	if ve != nil {
		return olevent.Event{}, ve
	}
	if ve := d.checkCounts(w); ve != nil {
		return olevent.Event{}, ve
	}
	ev := olevent.Event{
		Kind: kind, EventTime: t, Producer: w.Producer, SchemaURL: w.SchemaURL,
		EnvelopeID: w.EventID, Raw: append(json.RawMessage(nil), raw...),
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
