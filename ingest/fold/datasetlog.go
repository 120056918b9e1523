package fold

import (
	"maps"
	"math"
	"sort"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// A dataset's observation log (DatasetLog.Log) would grow with every run that reads or writes the dataset, and
// every batch touching it decodes, folds and rewrites the whole log: O(history) per event, and a hub read by a
// thousand jobs a day would carry a year of observations on its node. So the schema and mention observations
// (the bulk, Sealable) are sealed: once the log holds more than a limit of them, the oldest, all up to a cut
// time T, move to an immutable chunk (LogChunk, stored by ingest/project as a DatasetLogChunk node), and the
// field-history fold up to T is kept (LogBase), so later observations fold from there. Lifecycle and
// declaration observations (rare) stay in the log.
//
// Sealing never changes a result: the fold from the base over the rest equals the fold over everything. An event
// that arrives late, with an observation at or before T (LateFor), restores the chunks from the one holding its
// time on (each chunk keeps the base it started from) into the log (Restore), so the cost of a late event is
// proportional to how late it is, not to the dataset's history. See docs/adr/0015-projection-without-history-growth.md.

// DatasetLog is a dataset's observation log as the folds read it: the observations not sealed, the schemas
// their schema observations reference by hash, and the sealed base (nil while nothing is sealed). It is part of
// the dataset's stored state (ingest/project's dsState embeds it; the JSON names are the stored ones).
type DatasetLog struct {
	Log     []Obs                            `json:"log,omitempty"`
	Schemas map[string][]olevent.SchemaField `json:"schemas,omitempty"` // distinct schemas by hash
	Base    *LogBase                         `json:"base,omitempty"`
}

// LogBase is the sealed part of a dataset's log: the field histories after folding every observation at or
// before T, and how many chunks hold the sealed observations. Stored as it is (JSON names included).
type LogBase struct {
	T     int64       `json:"t"`
	Seq   int         `json:"n"`
	Hists []FieldHist `json:"h,omitempty"`
}

// LogChunk is one sealed stretch of a dataset's log: the schema and mention observations in (From, To], the
// schemas they reference, and the base the stretch was folded from (nil for the first). Stored as it is.
type LogChunk struct {
	Seq     int                              `json:"n"`
	From    int64                            `json:"from"`
	To      int64                            `json:"to"`
	Base    *LogBase                         `json:"base,omitempty"`
	Obs     []Obs                            `json:"obs"`
	Schemas map[string][]olevent.SchemaField `json:"schemas,omitempty"`
}

// Fields is the base as the field fold continues from it (nil: no base).
func (b *LogBase) Fields() *FieldBase {
	if b == nil {
		return nil
	}
	return &FieldBase{T: b.T, Hists: b.Hists}
}

// Clone is a copy whose log and schema map may be changed; the schemas and the base are shared (never changed
// in place).
func (l DatasetLog) Clone() DatasetLog {
	l.Log = append([]Obs(nil), l.Log...)
	l.Schemas = maps.Clone(l.Schemas)
	return l
}

// Merge adds a batch's observations. A schema observation is kept as (time, hash), its schema once per distinct
// hash; the same schema at the same time (and layer) is kept once.
func (l *DatasetLog) Merge(obs []Obs) {
	type timeHash struct {
		t int64
		h string
		r bool
	}
	seen := map[timeHash]bool{}
	for _, o := range l.Log {
		if o.Kind == ObsSchema {
			seen[timeHash{o.T, o.Hash, o.R}] = true
		}
	}
	for _, o := range obs {
		if o.Kind == ObsSchema && o.Fields != nil {
			o.Hash, o.Event = o.SchemaKey(), ""
			if l.Schemas == nil {
				l.Schemas = map[string][]olevent.SchemaField{}
			}
			l.Schemas[o.Hash], o.Fields = o.Fields, nil
			if k := (timeHash{o.T, o.Hash, o.R}); seen[k] {
				continue
			} else {
				seen[k] = true
			}
		}
		l.Log = append(l.Log, o)
	}
}

// FieldHistories are the dataset's field histories: FieldHistories from the sealed base over the log.
func (l *DatasetLog) FieldHistories() []*FieldHist {
	return FieldHistories(l.Base.Fields(), l.Log, l.Schemas)
}

// LatestTime is the latest time of an observation, sealed ones included (the latest sealed one is at the base's
// time); 0 for an empty log.
func (l *DatasetLog) LatestTime() int64 {
	var t int64
	for _, o := range l.Log {
		t = max(t, o.T)
	}
	if l.Base != nil {
		t = max(t, l.Base.T)
	}
	return t
}

// RepeatsLatestSchema reports whether a batch's observations can leave the field histories as they are
// without folding the log again: every one is a schema observation, later than every foldable observation in the
// log, of exactly the schema of the latest one (which is itself a schema observation). Applying the schema that
// is already in force, with nothing in between, opens and closes nothing (applySchema), so the fold over the log
// with them equals the fold without them. The common case: a job's next run reports the schema it reported last
// time.
func (l *DatasetLog) RepeatsLatestSchema(obs []Obs) bool {
	if len(obs) == 0 {
		return false
	}
	last := LatestFoldable(l.Log)
	if last == nil || last.Kind != ObsSchema || l.Schemas[last.Hash] == nil {
		return false
	}
	for _, o := range obs {
		if o.Kind != ObsSchema || o.T <= last.T {
			return false
		}
		if o.SchemaKey() != last.Hash {
			return false
		}
		// After an owner's schema S the read layer is closed and the owner layer holds exactly S: a reader's S
		// opens read histories only for paths the owners reported, which are left out. After a reader's S an
		// owner's S may open owner histories: not a repeat.
		if last.R && !o.R {
			return false
		}
	}
	return true
}

// LateFor returns the earliest time of the foldable observations at or before the sealed base (the chunks from
// there on must be restored first), and false when there is none (or no base).
func (l *DatasetLog) LateFor(obs []Obs) (int64, bool) {
	if l.Base == nil {
		return 0, false
	}
	t, late := int64(math.MaxInt64), false
	for _, o := range obs {
		if Foldable(o) && o.T <= l.Base.T {
			t, late = min(t, o.T), true
		}
	}
	return t, late
}

// Restore puts sealed chunks (sorted by Seq, the last one the newest) back into the log; the base becomes the one
// the first of them started from.
func (l *DatasetLog) Restore(chunks []LogChunk) {
	if len(chunks) == 0 {
		return
	}
	for _, c := range chunks {
		l.Log = append(l.Log, c.Obs...)
		for h, f := range c.Schemas {
			if l.Schemas == nil {
				l.Schemas = map[string][]olevent.SchemaField{}
			}
			l.Schemas[h] = f
		}
	}
	l.Base = chunks[0].Base
}

// Seal moves the oldest schema and mention observations into a new chunk when the log holds more than hotMax of
// them, keeping the newest keep (and every one at the cut's time or later); it returns nil when nothing was
// sealed.
func (l *DatasetLog) Seal(hotMax, keep int) *LogChunk {
	var hot []Obs
	for _, o := range l.Log {
		if Sealable(o) {
			hot = append(hot, o)
		}
	}
	if len(hot) <= hotMax {
		return nil
	}
	sort.SliceStable(hot, func(i, j int) bool { return ObsLess(hot[i], hot[j]) })
	cut := hot[len(hot)-keep-1].T
	var upTo, sealed, kept []Obs
	for _, o := range l.Log {
		switch {
		case o.T > cut:
			kept = append(kept, o)
		case Sealable(o):
			sealed, upTo = append(sealed, o), append(upTo, o)
		default:
			kept, upTo = append(kept, o), append(upTo, o)
		}
	}
	c := &LogChunk{From: math.MinInt64, To: cut, Base: l.Base, Obs: sealed, Schemas: map[string][]olevent.SchemaField{}}
	next := &LogBase{T: cut, Seq: 1}
	if l.Base != nil {
		c.From, next.Seq = l.Base.T, l.Base.Seq+1
	}
	c.Seq = next.Seq
	for _, h := range FoldFields(l.Base.Fields(), upTo, l.Schemas) {
		next.Hists = append(next.Hists, *h)
	}
	for _, o := range sealed {
		if o.Kind == ObsSchema {
			c.Schemas[o.Hash] = l.Schemas[o.Hash]
		}
	}
	l.Log, l.Base = kept, next
	l.pruneSchemas()
	return c
}

// pruneSchemas drops the schemas no observation in the log references.
func (l *DatasetLog) pruneSchemas() {
	used := map[string]bool{}
	for _, o := range l.Log {
		if o.Kind == ObsSchema {
			used[o.Hash] = true
		}
	}
	for h := range l.Schemas {
		if !used[h] {
			delete(l.Schemas, h)
		}
	}
}
