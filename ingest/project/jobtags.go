package project

import (
	"fmt"
	"sort"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/fold"
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

// jobTagLogField and jobTagHistoryField are the Job properties of the job tag log (projection version 9, ADR
// 0090): the log as fold.JobTagLog stores it (every facet of the recent window, change points before it) and the
// history it derives (JSON graph.TagInterval, what Job.tagHistory answers). jobTagsField is kept as the log's
// latest list, and its stamps as the latest entry's.
const (
	jobTagLogField     = "jobTagLog"
	jobTagHistoryField = "jobTagHistory"
)

// jobTagEntry is the job tag log entry of an event carrying a job tags facet: its time, id and authenticated
// sender (never a name the facet claims), and the tags (none: it cleared them).
func jobTagEntry(r *rec) (fold.JobTagEntry, bool) {
	if r.Job == nil || r.Job.Tags == "" {
		return fold.JobTagEntry{}, false
	}
	v := []string{}
	if err := json.Unmarshal([]byte(r.Job.Tags), &v); err != nil {
		return fold.JobTagEntry{}, false // written by jobTagsJSON: never
	}
	return fold.JobTagEntry{T: r.Time, E: r.ID, B: r.Principal, V: v}, true
}

// jobTagProps merges a batch's job tags facets into the job's stored log and sets what derives from it: the log,
// the history, and the current list with its stamps (the latest entry's). Nothing without a facet in the batch.
func jobTagProps(stored string, batch []fold.JobTagEntry, props map[string]any) error {
	if len(batch) == 0 {
		return nil
	}
	l, err := fold.DecodeJobTagLog(stored)
	if err != nil {
		return fmt.Errorf("decode %s: %w", jobTagLogField, err)
	}
	l = l.Merge(batch)
	h, _ := json.Marshal(l.History())
	props[jobTagLogField], props[jobTagHistoryField] = l.Encode(), string(h)
	latest, _ := l.Latest()
	cur, _ := json.Marshal(latest.V)
	props[jobTagsField], props[stampTProp(jobTagsField)], props[stampEProp(jobTagsField)] = string(cur), latest.T, eventDigest(latest.E)
	return nil
}
