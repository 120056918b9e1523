package oracle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
	facets "github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle/ofacets"
)

// Envelope field names per object. encoding/json matches struct fields case-insensitively, so without this check
// {"run": {...}, "RUN": {...}} could validate one object and decode the other.
func envelopeFields(kind string) []string {
	switch kind {
	case "event":
		return []string{"eventId", "eventTime", "eventType", "producer", "schemaURL", "run", "job", "inputs", "outputs", "dataset"}
	case "run":
		return []string{"runId", "facets"}
	case "job":
		return []string{"namespace", "name", "facets"}
	case "dataset":
		return []string{"namespace", "name", "facets", "inputFacets", "outputFacets"}
	}
	return nil
}

// checkFieldCase rejects envelope keys that only differ in case from a field name.
func checkFieldCase(doc map[string]any) *olevent.ValidationError {
	if ve := checkObjectKeys("", "event", doc); ve != nil {
		return ve
	}
	for _, name := range []string{"run", "job", "dataset"} {
		if m, ok := doc[name].(map[string]any); ok {
			if ve := checkObjectKeys(name, name, m); ve != nil {
				return ve
			}
		}
	}
	for _, list := range []string{"inputs", "outputs"} {
		items, _ := doc[list].([]any)
		for i, it := range items {
			if m, ok := it.(map[string]any); ok {
				if ve := checkObjectKeys(fmt.Sprintf("%s[%d]", list, i), "dataset", m); ve != nil {
					return ve
				}
			}
		}
	}
	return nil
}

func checkObjectKeys(path, kind string, obj map[string]any) *olevent.ValidationError {
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		for _, f := range envelopeFields(kind) {
			if key != f && strings.EqualFold(key, f) {
				field := facets.JoinPath(path, key)
				return invalid(field, olevent.RuleFieldCase, "%s is not an OpenLineage field: field names are case-sensitive, did you mean %s?", field, facets.JoinPath(path, f))
			}
		}
	}
	return nil
}
