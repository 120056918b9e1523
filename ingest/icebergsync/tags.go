package icebergsync

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Catalog tags (ADR 0075): table properties that carry governance tags, sent as OpenLineage's standard tags
// dataset facet on the table's state event. The property names follow Iceberg's own per-column properties
// (`write.metadata.metrics.column.<name>`), under Headwater's prefix so no engine reads them.
const (
	// TagsProperty is the table property of the table's own tags: a comma-separated list of `key` or
	// `key=value` (`pii, tier=gold`).
	TagsProperty = "headwater.tags"
	// ColumnTagsPrefix starts the property of one column's tags: `headwater.column-tags.<path>` with the path as
	// the schema facet names it (`ship.city`, a list's `element`, a map's `key`/`value`), the same list syntax.
	ColumnTagsPrefix = "headwater.column-tags."
	// TagSource is the source of every tag the sync sends: the sync recognises its own tags by it.
	TagSource = "ICEBERG_CATALOG"
	// MaxTablePropertyTags caps the tags one table's properties may carry (the rest is a warning, not sent).
	MaxTablePropertyTags = 1_000

	tagsFacetURL = "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json"
)

// catalogTag is one tag a table property carries.
type catalogTag struct{ Key, Value, Field string }

// name renders the tag as Dataset.tags and the tag history do: `[field:]key[=value]`.
func (t catalogTag) name() string {
	return olevent.Tag{Key: t.Key, Value: t.Value, Field: t.Field}.Name()
}

// The rules a Warning names.
const (
	RuleColumnTagsPath       = "column-tags-path"
	RuleTagKey               = "tag-key"
	RuleMaxTablePropertyTags = "MaxTablePropertyTags"
)

// Warning is one thing of the catalog the sync did not send: the table, the property (empty when the rule is
// about the table's properties as a whole), the rule, and what was not sent.
type Warning struct {
	Table, Property, Rule, Detail string
}

// String is the warning as the CLI prints it and the scheduled sync logs it.
func (w Warning) String() string {
	if w.Property == "" {
		return fmt.Sprintf("table %s: %s (rule: %s)", w.Table, w.Detail, w.Rule)
	}
	return fmt.Sprintf("table %s: property %s %s (rule: %s)", w.Table, w.Property, w.Detail, w.Rule)
}

// catalogTags are the tags of a table's properties, sorted by name and without repeats, and a warning per
// property entry that is not sent (naming the table, the property and the rule): an entry with no key, a column
// path the current schema does not have (a column renamed or dropped after it was tagged), more than
// MaxTablePropertyTags.
func catalogTags(table string, md *icebergrest.TableMetadata) ([]catalogTag, []Warning) {
	var out []catalogTag
	var warns []Warning
	paths := map[string]bool{}
	if s := md.CurrentSchema(); s != nil {
		for _, f := range s.Flatten() {
			paths[f.Path] = true
		}
	}
	keys := make([]string, 0, len(md.Properties))
	for k := range md.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, prop := range keys {
		field, ok := "", prop == TagsProperty
		if !ok && strings.HasPrefix(prop, ColumnTagsPrefix) {
			field, ok = strings.TrimPrefix(prop, ColumnTagsPrefix), true
			if !paths[field] {
				warns = append(warns, Warning{Table: table, Property: prop, Rule: RuleColumnTagsPath,
					Detail: fmt.Sprintf("names column %q, which the current schema does not have: not sent", field)})
				continue
			}
		}
		if !ok {
			continue
		}
		for entry := range strings.SplitSeq(md.Properties[prop], ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			k, v, _ := strings.Cut(entry, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "" {
				warns = append(warns, Warning{Table: table, Property: prop, Rule: RuleTagKey,
					Detail: fmt.Sprintf("entry %q has no key: not sent", entry)})
				continue
			}
			out = append(out, catalogTag{Key: k, Value: v, Field: field})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name() < out[j].name() })
	out = slices.CompactFunc(out, func(a, b catalogTag) bool { return a.name() == b.name() })
	if len(out) > MaxTablePropertyTags {
		warns = append(warns, Warning{Table: table, Rule: RuleMaxTablePropertyTags,
			Detail: fmt.Sprintf("%d tags in its properties, only the first %d sent", len(out), MaxTablePropertyTags)})
		out = out[:MaxTablePropertyTags]
	}
	return out, warns
}

// sameTags reports whether the catalog's tags are the ones in force (both sorted): the sync's own (inForce), and
// those of its tags another source set too (others), which stay that source's (ADR 0087).
func sameTags(tags []catalogTag, inForce []string, others []olevent.Tag) bool {
	if len(others) > 0 {
		byOther := map[string]bool{}
		for _, o := range others {
			byOther[o.Name()] = true
		}
		var rest []catalogTag
		for _, t := range tags {
			if !byOther[t.name()] {
				rest = append(rest, t)
			}
		}
		tags = rest
	}
	return slices.EqualFunc(tags, inForce, func(t catalogTag, n string) bool { return t.name() == n })
}

// tagsFacet is the standard tags facet carrying the catalog's full list (an empty list removes the sync's tags:
// the facet replaces the dataset's list) and every other source's tags in force as they are (others), so the
// sync changes only its own tags (ADR 0087); a tag another source set too stays that source's.
func tagsFacet(tags []catalogTag, others []olevent.Tag) map[string]any {
	list := make([]any, 0, len(tags)+len(others))
	byOther := map[string]bool{}
	for _, o := range others {
		byOther[o.Name()] = true
		e := map[string]any{"key": o.Key}
		if o.Source != "" {
			e["source"] = o.Source
		}
		if o.Value != "" {
			e["value"] = o.Value
		}
		if o.Field != "" {
			e["field"] = o.Field
		}
		list = append(list, e)
	}
	for _, t := range tags {
		if byOther[t.name()] {
			continue
		}
		e := map[string]any{"key": t.Key, "source": TagSource}
		if t.Value != "" {
			e["value"] = t.Value
		}
		if t.Field != "" {
			e["field"] = t.Field
		}
		list = append(list, e)
	}
	return facet(map[string]any{"_schemaURL": tagsFacetURL, "tags": list})
}
