package mutation

import (
	"encoding/json"
	"strings"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// tagName renders a tag as Dataset.tags does: `[field:]key[=value]` (the projector's rendering).
func tagName(t olevent.Tag) string { return t.Name() }

// tagsInForce are the tags named names (the dataset's tags in force at t) as facet entries: taken from the latest
// tags facet (raw) where it lists them, else read back from the rendered name (the first ':' ends the field, the
// first '=' the key); each keeps the source of the interval in force.
func tagsInForce(names []string, row graph.DatasetRow, raw json.RawMessage, t int64) []olevent.Tag {
	byName := map[string]olevent.Tag{}
	var f struct {
		Tags []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Source string `json:"source"`
			Field  string `json:"field"`
		} `json:"tags"`
	}
	if len(raw) > 0 && json.Unmarshal(raw, &f) == nil {
		for _, e := range f.Tags {
			tg := olevent.Tag{Key: e.Key, Value: e.Value, Source: e.Source, Field: e.Field}
			byName[tagName(tg)] = tg
		}
	}
	out := make([]olevent.Tag, 0, len(names))
	for _, n := range names {
		tg, ok := byName[n]
		if !ok {
			tg = parseTagName(n)
		}
		if iv, ok := row.TagAt(n, t); ok {
			tg.Source = iv.Source
		}
		out = append(out, tg)
	}
	return out
}

func parseTagName(n string) olevent.Tag {
	var tg olevent.Tag
	if i := strings.IndexByte(n, ':'); i >= 0 && !strings.Contains(n[:i], "=") {
		tg.Field, n = n[:i], n[i+1:]
	}
	tg.Key, tg.Value, _ = strings.Cut(n, "=")
	return tg
}

// setTags is cur with each tag set on field: a tag of the same key on the same field is replaced, the new one
// attributed to source.
func setTags(cur []olevent.Tag, field string, tags []Tag, source string) []olevent.Tag {
	out := make([]olevent.Tag, 0, len(cur)+len(tags))
	for _, c := range cur {
		replaced := false
		for _, t := range tags {
			replaced = replaced || (c.Field == field && c.Key == t.Key)
		}
		if !replaced {
			out = append(out, c)
		}
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if seen[t.Key] { // the last value of a key named twice wins
			continue
		}
		seen[t.Key] = true
		v := t.Value
		for _, u := range tags {
			if u.Key == t.Key {
				v = u.Value
			}
		}
		out = append(out, olevent.Tag{Key: t.Key, Value: v, Source: source, Field: field})
	}
	return out
}

// removeTags is cur without the tags on field that match one of tags (same key; same value unless it names
// none); a tag matching nothing in force is BAD_REQUEST.
func removeTags(cur []olevent.Tag, field string, tags []Tag) ([]olevent.Tag, error) {
	matches := func(c olevent.Tag, t Tag) bool {
		return c.Field == field && c.Key == t.Key && (t.Value == "" || c.Value == t.Value)
	}
	for i, t := range tags {
		found := false
		for _, c := range cur {
			found = found || matches(c, t)
		}
		if !found {
			return nil, badRequest("tags[%d]: no tag %s is in force there", i, tagName(olevent.Tag{Key: t.Key, Value: t.Value, Field: field}))
		}
	}
	out := make([]olevent.Tag, 0, len(cur))
	for _, c := range cur {
		drop := false
		for _, t := range tags {
			drop = drop || matches(c, t)
		}
		if !drop {
			out = append(out, c)
		}
	}
	return out, nil
}

// wireTags is the tags facet's list (never null: an empty list removes every tag).
func wireTags(tags []olevent.Tag) []map[string]string {
	out := make([]map[string]string, 0, len(tags))
	for _, t := range tags {
		m := map[string]string{"key": t.Key, "value": t.Value}
		if t.Source != "" {
			m["source"] = t.Source
		}
		if t.Field != "" {
			m["field"] = t.Field
		}
		out = append(out, m)
	}
	return out
}

// tagTimes is the latest event time of the dataset's tag history (0 for none).
func tagTimes(h []graph.TagInterval) int64 {
	return latestTime(h, func(iv graph.TagInterval) (int64, int64) { return iv.ValidFrom, iv.ValidTo })
}

// latestTime is the latest validFrom or closed validTo of a history (0 for none).
func latestTime[T any](h []T, span func(T) (from, to int64)) int64 {
	var t int64
	for _, iv := range h {
		from, to := span(iv)
		t = max(t, from)
		if to != graph.OpenEnd {
			t = max(t, to)
		}
	}
	return t
}
