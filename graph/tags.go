package graph

import (
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// TagInterval is one stretch of time a tag was in force on a dataset (Dataset.tagHistory, projection version 6,
// and a job's: Job.tagHistory, version 9, ADR 0090, whose Name is `key[=value]`,
// docs/adr/0066-temporal-tags.md): Name is the tag as Dataset.tags renders it (`[field:]key[=value]`), Source
// the facet entry's source, EventID the event whose tags facet set it; [ValidFrom, ValidTo) by event time,
// ValidTo OpenEnd while it is in force.
type TagInterval struct {
	Name      string `json:"n"`
	Source    string `json:"s,omitempty"`
	ValidFrom int64  `json:"f"`
	ValidTo   int64  `json:"t"`
	EventID   string `json:"e,omitempty"`
	// By is the authenticated principal of the event that set it (projection version 8, ADR 0086); "" for an
	// interval written before.
	By string `json:"b,omitempty"`
}

// ParseTagHistory decodes a stored tagHistory (nil for none or an unreadable one).
func ParseTagHistory(s string) []TagInterval {
	if s == "" {
		return nil
	}
	var out []TagInterval
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// TagsAt are the dataset's tags in force at t, sorted. A dataset without a tag history (no tags facet ever, or a
// graph not upgraded to version 6) answers its current tags, as before version 6.
func (r DatasetRow) TagsAt(t int64) []string {
	if len(r.TagHistory) == 0 {
		return r.Tags
	}
	return tagsAt(r.TagHistory, t)
}

// TagsAt are the job's tags in force at t, sorted. A job without a tag history (no job tags facet, or a graph not
// upgraded to version 9) answers its current tags (ADR 0090).
func (r JobRow) TagsAt(t int64) []string {
	if len(r.TagHistory) == 0 {
		return r.Tags
	}
	return tagsAt(r.TagHistory, t)
}

func tagsAt(h []TagInterval, t int64) []string {
	var out []string
	for _, iv := range h {
		if iv.ValidFrom <= t && t < iv.ValidTo && (len(out) == 0 || out[len(out)-1] != iv.Name) {
			out = append(out, iv.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TagAt is the interval of the tag named name in force at t (false: none).
func (r DatasetRow) TagAt(name string, t int64) (TagInterval, bool) {
	for _, iv := range r.TagHistory {
		if iv.Name == name && iv.ValidFrom <= t && t < iv.ValidTo {
			return iv, true
		}
	}
	return TagInterval{}, false
}

// SortTagIntervals orders a tag history as it is stored and answered: by name, then start.
func SortTagIntervals(h []TagInterval) {
	slices.SortStableFunc(h, func(a, b TagInterval) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.ValidFrom, b.ValidFrom)
	})
}
