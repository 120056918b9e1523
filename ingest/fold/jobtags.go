package fold

import (
	"slices"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
)

// A job's tag log (projection version 9, docs/adr/0090-job-tag-history.md): every job tags facet of the job
// (event time, event id, principal, the tags it listed), sorted, from which the job's tag history derives. dbt
// and Airflow send the facet on every event, so keeping every entry would grow a busy job's node without bound;
// keeping only change points (an entry whose list differs from the one in force) is order-dependent: facets t1
// [a], t2 [b], t3 [a] arriving t1, t3, t2 would keep t1 and drop t3 (a repeat), and t2 would then leave [b] in
// force where the in-order replay has [a] again from t3 (ADR 0086's design note).
//
// So the log keeps a recent window in full and compacts only what is older: every entry whose event time is
// within JobTagWindow of the log's latest entry and among the newest JobTagWindowEntries entries (the window is
// the shorter of the two), is kept as it came; an older entry repeating the list of
// the entry before it is dropped (a change-point log). A late facet inside the window is therefore exact (the
// history is what in-order application gives, whatever the arrival order); the one inexactness: a late facet
// older than the window is folded against the change points, so when it splits a run of repeats the run resumes
// only at its next change point, not at the repeat that in-order replay would have reopened it with. A replay or
// duplicate (same time, event and principal) changes nothing. The window only moves forward (the latest time
// and the count only grow), so an entry is compacted once it has left it for good.

// JobTagWindow is how far (event time, milliseconds) before the job tag log's latest entry every entry is kept
// in full: three days, longer than an event is usually late (a retried dbt run, a backfilled DAG, a consumer
// restarted after a weekend outage).
const JobTagWindow int64 = 3 * 24 * 60 * 60 * 1000

// JobTagWindowEntries bounds the window by count: at most this many of the newest entries are kept in full (a
// job with more events in JobTagWindow keeps a window this long instead: an hourly Airflow task sending the facet
// on three events a run keeps about 21 hours). It bounds the node, and what each event carrying the facet
// rewrites: the log holds at most this many entries (about 81 bytes each with OpenLineage's sha256 event ids)
// plus one per real change of the job's tags before them. 64, not 256 (2026-12-03, ADR 0090): 256 entries are
// 21 KB rewritten per event of a busy job, as much again as the whole transaction log of a projected event
// (issue 17's profile); 64 are about 5 KB.
const JobTagWindowEntries = 64

// JobTagEntry is one job tags facet: at T, event E sent by principal B, the tags it listed (`key[=value]`,
// sorted; empty: it cleared them, ADR 0086).
type JobTagEntry struct {
	T int64
	E string
	B string
	V []string
}

func jobTagLess(a, b JobTagEntry) bool {
	return a.T < b.T || (a.T == b.T && (a.E < b.E || (a.E == b.E && a.B < b.B)))
}

func jobTagCmp(a, b JobTagEntry) int {
	switch {
	case jobTagLess(a, b):
		return -1
	case jobTagLess(b, a):
		return 1
	}
	return 0
}

// JobTagLog is a job's tag log, sorted by (time, event id, principal).
type JobTagLog []JobTagEntry

// Merge adds a batch's entries (an entry already there is kept once) and compacts what is older than the window.
func (l JobTagLog) Merge(in []JobTagEntry) JobTagLog {
	out := slices.Clone(l)
	for _, e := range in {
		if e.V == nil {
			e.V = []string{}
		}
		i, found := slices.BinarySearchFunc(out, e, jobTagCmp)
		if !found {
			out = slices.Insert(out, i, e)
		}
	}
	return out.compact()
}

// Cut is the time from which every entry is kept in full: JobTagWindow before the latest entry, or the time of
// the JobTagWindowEntries-th newest entry when that is later.
func (l JobTagLog) Cut() int64 {
	if len(l) == 0 {
		return 0
	}
	cut := l[len(l)-1].T - JobTagWindow
	if len(l) > JobTagWindowEntries {
		cut = max(cut, l[len(l)-JobTagWindowEntries].T)
	}
	return cut
}

// compact drops the entries older than Cut that repeat the list of the entry kept before them.
func (l JobTagLog) compact() JobTagLog {
	cut := l.Cut()
	out := l[:0]
	for _, e := range l {
		if e.T < cut && len(out) > 0 && slices.Equal(out[len(out)-1].V, e.V) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Latest is the entry in force now (false: an empty log).
func (l JobTagLog) Latest() (JobTagEntry, bool) {
	if len(l) == 0 {
		return JobTagEntry{}, false
	}
	return l[len(l)-1], true
}

// History is the job's tag history: per tag, the intervals it was in force, from the entry that set it (its
// event and principal) to the first later entry without it (graph.OpenEnd while in force), by name then start.
func (l JobTagLog) History() []graph.TagInterval {
	open := map[string]*graph.TagInterval{}
	var out []graph.TagInterval
	for _, e := range l {
		now := map[string]bool{}
		for _, t := range e.V {
			now[t] = true
		}
		for name, iv := range open {
			if !now[name] {
				iv.ValidTo = e.T
				out = append(out, *iv)
				delete(open, name)
			}
		}
		for _, name := range e.V {
			if _, ok := open[name]; !ok {
				open[name] = &graph.TagInterval{Name: name, ValidFrom: e.T, ValidTo: graph.OpenEnd, EventID: e.E, By: e.B}
			}
		}
	}
	for _, iv := range open {
		out = append(out, *iv)
	}
	graph.SortTagIntervals(out)
	return out
}

// storedJobTag is an entry as stored: V is left out when it repeats the entry before it (most of a dbt job's
// entries), `[]` for a facet that cleared the tags.
type storedJobTag struct {
	T int64     `json:"t"`
	E string    `json:"e"`
	B string    `json:"b,omitempty"`
	V *[]string `json:"v,omitempty"`
	R bool      `json:"r,omitempty"` // the list of the entry before
}

// Encode is the log as the Job node stores it (jobTagLog): a JSON list, a repeated list written once.
func (l JobTagLog) Encode() string {
	s := make([]storedJobTag, len(l))
	for i, e := range l {
		s[i] = storedJobTag{T: e.T, E: e.E, B: e.B}
		if i > 0 && slices.Equal(l[i-1].V, e.V) {
			s[i].R = true
			continue
		}
		v := e.V
		s[i].V = &v
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// DecodeJobTagLog decodes a stored jobTagLog ("" is an empty log).
func DecodeJobTagLog(s string) (JobTagLog, error) {
	if s == "" {
		return nil, nil
	}
	var st []storedJobTag
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return nil, err
	}
	out := make(JobTagLog, len(st))
	for i, e := range st {
		out[i] = JobTagEntry{T: e.T, E: e.E, B: e.B, V: []string{}}
		switch {
		case e.R && i > 0:
			out[i].V = out[i-1].V
		case e.V != nil:
			out[i].V = *e.V
		}
	}
	return out, nil
}
