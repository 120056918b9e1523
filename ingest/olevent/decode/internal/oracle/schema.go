package oracle

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"slices"

	"github.com/headwater-data/headwater/ingest/olevent"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schema/envelope.json
var envelopeSchemaJSON []byte

const envelopeSchemaURL = "https://headwater.invalid/schema/olevent/envelope.json"

// envelopeSchemas holds one compiled schema per event shape.
type envelopeSchemas map[olevent.Kind]*jsonschema.Schema

// compileEnvelope compiles the embedded envelope schema once per decoder, with format assertions on
// (date-time, uri, uuid are envelope rules, not annotations).
func compileEnvelope() (envelopeSchemas, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(envelopeSchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("olevent: parse envelope schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(envelopeSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("olevent: add envelope schema: %w", err)
	}
	out := envelopeSchemas{}
	for kind, def := range map[olevent.Kind]string{olevent.KindRun: "RunEvent", olevent.KindJob: "JobEvent", olevent.KindDataset: "DatasetEvent"} {
		s, err := c.Compile(envelopeSchemaURL + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("olevent: compile %s schema: %w", def, err)
		}
		out[kind] = s
	}
	return out, nil
}

// validate checks doc against the schema of its shape and maps the first leaf error to a ValidationError.
func (s envelopeSchemas) validate(kind olevent.Kind, doc any) *olevent.ValidationError {
	err := s[kind].Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return invalid("$", olevent.RuleSchema, "the event does not match the OpenLineage envelope: %v", err)
	}
	leaves := collectLeaves(ve, nil)
	mapped := make([]*olevent.ValidationError, 0, len(leaves))
	for _, l := range leaves {
		mapped = append(mapped, mapSchemaError(l))
	}
	// Several violations: report one, chosen deterministically (document order of paths is not kept by the
	// validator, so sort by field then rule).
	slices.SortFunc(mapped, func(a, b *olevent.ValidationError) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Rule, b.Rule))
	})
	return mapped[0]
}

// collectLeaves returns the most specific violations (errors without causes).
func collectLeaves(ve *jsonschema.ValidationError, acc []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return append(acc, ve)
	}
	for _, c := range ve.Causes {
		acc = collectLeaves(c, acc)
	}
	return acc
}
