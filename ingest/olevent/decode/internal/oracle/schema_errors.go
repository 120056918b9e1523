package oracle

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
	facets "github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle/ofacets"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// mapSchemaError turns one leaf schema violation into a ValidationError with a readable field path and rule.
func mapSchemaError(ve *jsonschema.ValidationError) *olevent.ValidationError {
	loc := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		f := fieldPath(append(slicesClone(loc), k.Missing[0]))
		return invalid(f, olevent.RuleRequired, "%s is required", f)
	case *kind.Type:
		f := fieldPath(loc)
		return invalid(f, olevent.RuleType, "%s must be %s, got %s", f, wantTypes(k.Want), k.Got)
	case *kind.Enum:
		f := fieldPath(loc)
		return invalid(f, olevent.RuleEnum, "%s must be one of %s, got %q", f, joinAny(k.Want), facets.Truncate(k.Got))
	case *kind.Format:
		return mapFormat(fieldPath(loc), k)
	case *kind.MinLength:
		f := fieldPath(loc)
		return invalid(f, olevent.RuleNotEmpty, "%s must not be empty", f)
	default:
		f := fieldPath(loc)
		return invalid(f, olevent.RuleSchema, "%s does not match the OpenLineage envelope", f)
	}
}

func mapFormat(f string, k *kind.Format) *olevent.ValidationError {
	switch k.Want {
	case "uuid":
		return invalid(f, olevent.RuleUUID, "%s must be a UUID, got %q", f, facets.Truncate(k.Got))
	case "date-time":
		return invalid(f, olevent.RuleFormat, "%s must be an RFC 3339 date-time with a time-zone offset, got %q", f, facets.Truncate(k.Got))
	case "uri":
		return invalid(f, olevent.RuleFormat, "%s must be an absolute URI, got %q", f, facets.Truncate(k.Got))
	default:
		return invalid(f, olevent.RuleFormat, "%s must be a valid %s, got %q", f, k.Want, facets.Truncate(k.Got))
	}
}

// fieldPath renders an instance location as "inputs[2].facets.schema"; the root is "$".
func fieldPath(loc []string) string {
	if len(loc) == 0 {
		return "$"
	}
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func toString(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}

func joinAny(vs []any) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, toString(v))
	}
	return strings.Join(parts, ", ")
}

// wantTypes renders JSON types as "an array", "an object or null" (null last).
func wantTypes(want []string) string {
	var types []string
	nullable := false
	for _, w := range want {
		if w == "null" {
			nullable = true
			continue
		}
		types = append(types, w)
	}
	s := article(strings.Join(types, " or "))
	if nullable {
		s += " or null"
	}
	return s
}

func article(t string) string {
	if strings.HasPrefix(t, "a") || strings.HasPrefix(t, "o") || strings.HasPrefix(t, "i") {
		return "an " + t
	}
	return "a " + t
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
