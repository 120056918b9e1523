package gen

import "slices"

// piiColumns are the PII classes of the personal columns of fieldVocab (docs/loadtest.md, "PII tags"): the
// classes form the hierarchy of docs/governance.md (`pii.email` is below `pii`).
var piiColumns = map[string]string{
	"email": "pii.email", "phone": "pii.phone", "first_name": "pii.name", "last_name": "pii.name", "ip_address": "pii",
}

// sourceTags are a dataset's tags: on a source (layer 0), one `field:class=true` per personal column, as the
// projector stores a tags facet entry with a field; none elsewhere. It draws no randomness, so the rest of the
// world is the same with or without tags.
func sourceTags(layer int, fields []Field) []string {
	if layer != 0 {
		return nil
	}
	var out []string
	for _, f := range fields {
		if c, ok := piiColumns[f.Path]; ok {
			out = append(out, f.Path+":"+c+"=true")
		}
	}
	slices.Sort(out)
	return out
}
