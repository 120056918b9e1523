package project

import (
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// jobTagsField is the Job property holding the job tags facet's tags (projection version 6, ADR 0068): a JSON
// list of `key[=value]` strings, sorted, from the latest event (by event time, then id) carrying a facet (an
// empty one too since version 8, ADR 0086: `[]`), like the job's other descriptive properties (jobMetaFields). The flows show them on the steps whose job
// carries them; they never make a field an origin.
const jobTagsField = "jobTags"

// jobTagsJSON renders a job tags facet as jobTagsField stores it; "" for no facet, "[]" for an empty one, which is
// then the latest stamp and clears the job's tags from its event time (projection version 8, ADR 0086; version 7
// skipped it as no value).
func jobTagsJSON(tags []olevent.Tag) string {
	if tags == nil {
		return ""
	}
	if len(tags) == 0 {
		return "[]"
	}
	names := make([]string, 0, len(tags))
	for _, t := range tags {
		names = append(names, tagName(olevent.Tag{Key: t.Key, Value: t.Value}))
	}
	sort.Strings(names)
	b, _ := json.Marshal(compactStrings(names))
	return string(b)
}
