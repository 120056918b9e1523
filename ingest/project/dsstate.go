package project

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// stamped is a value with the event time and id that set it; the latest (time, id) wins, but a value an owner
// reported always wins over one observed on read (R).
type stamped struct {
	T int64           `json:"t"`
	E string          `json:"e"`
	V json.RawMessage `json:"v"`
	R bool            `json:"r,omitempty"`
}

func (s stamped) newer(o stamped) bool {
	if s.R != o.R {
		return !s.R
	}
	return s.T > o.T || (s.T == o.T && s.E > o.E)
}

// dsState is the per-dataset projection state kept (as JSON) on the Dataset node: the observation log from which
// fields, drops and declared lineage are derived, and per-key latest metadata.
type dsState struct {
	// DatasetLog is the observation log (Log), the schemas it references (Schemas) and its sealed part (Base,
	// nil while nothing is sealed): the fold's (ingest/fold), stored by encode as dsStateWire.
	fold.DatasetLog
	Meta   map[string]stamped `json:"meta,omitempty"`   // description, owners, tags
	Facets map[string]stamped `json:"facets,omitempty"` // dataset facets by key
	Tags   []tagObs           `json:"tags,omitempty"`   // every tags facet, sorted (tags.go)
	Blocks []blockObs         `json:"blocks,omitempty"` // every block facet, sorted (blocks.go)
	// FieldsSig is the digest of the field histories the log gives (fieldsDigest), kept so the next batch
	// need not fold the whole log a second time to tell whether fields changed. "" (older states): recomputed.
	FieldsSig string `json:"fs,omitempty"`
	// Off is, per source partition, the offset after the last event of it folded in (dsfold.go): a saved
	// snapshot holds every event of the partition before it, so a replay after a crash folds only what is after.
	Off map[string]int64 `json:"off,omitempty"`
	// IceSchemas are the Iceberg schemas the catalog sync recorded (schemarefs.go, projection version 7).
	IceSchemas iceSchemas `json:"is,omitempty"`
}

// dsStateWire is dsState as stored: the log's plain schema observations (time and hash only, the bulk of a
// busy dataset's log) are kept per schema as delta-encoded times, which is a fraction of the bytes, and of the
// JSON work, of one object per observation. States written before this form (all observations in "log") read
// the same.
type dsStateWire struct {
	Log        []fold.Obs                       `json:"log,omitempty"`
	Repeats    []schemaTimes                    `json:"sr,omitempty"`
	Schemas    map[string][]olevent.SchemaField `json:"schemas,omitempty"`
	Meta       map[string]stamped               `json:"meta,omitempty"`
	Facets     map[string]stamped               `json:"facets,omitempty"`
	Tags       []tagObs                         `json:"tags,omitempty"`
	Blocks     []blockObs                       `json:"blocks,omitempty"`
	FieldsSig  string                           `json:"fs,omitempty"`
	Base       *fold.LogBase                    `json:"base,omitempty"`
	Off        map[string]int64                 `json:"off,omitempty"`
	IceSchemas iceSchemas                       `json:"is,omitempty"`
}

// schemaTimes are the times of a schema's plain observations: the first, then each as the difference from the
// one before (ascending).
type schemaTimes struct {
	Hash string  `json:"h"`
	T    []int64 `json:"t"`
	R    bool    `json:"r,omitempty"` // observed on read
}

// plainSchemaObs is a schema observation carrying nothing but its time and hash (merge makes them so).
func plainSchemaObs(o fold.Obs) bool {
	return o.Kind == fold.ObsSchema && o.Event == "" && o.Hash != "" && o.Fields == nil && o.Paths == nil &&
		o.State == "" && o.Keys == nil && o.Prod == "" && o.DeclFields == nil
}

func decodeState(v any) (*dsState, error) {
	w := &dsStateWire{}
	if _, err := unpackState(v, w); err != nil {
		return nil, fmt.Errorf("decode dataset state: %w", err)
	}
	st := &dsState{DatasetLog: fold.DatasetLog{Log: w.Log, Schemas: w.Schemas, Base: w.Base}, Meta: w.Meta,
		Facets: w.Facets, FieldsSig: w.FieldsSig, Off: w.Off, Tags: w.Tags, Blocks: w.Blocks, IceSchemas: w.IceSchemas}
	if len(w.Repeats) > 0 {
		for _, r := range w.Repeats {
			var t int64
			for i, d := range r.T {
				if i == 0 {
					t = d
				} else {
					t += d
				}
				st.Log = append(st.Log, fold.Obs{T: t, Hash: r.Hash, Kind: fold.ObsSchema, R: r.R})
			}
		}
		sort.SliceStable(st.Log, func(i, j int) bool { return fold.ObsLess(st.Log[i], st.Log[j]) })
	}
	if st.Meta == nil {
		st.Meta = map[string]stamped{}
	}
	if st.Facets == nil {
		st.Facets = map[string]stamped{}
	}
	return st, nil
}

func (st *dsState) encode() ([]byte, error) {
	sort.SliceStable(st.Log, func(i, j int) bool { return fold.ObsLess(st.Log[i], st.Log[j]) })
	w := &dsStateWire{Schemas: st.Schemas, Meta: st.Meta, Facets: st.Facets, FieldsSig: st.FieldsSig, Base: st.Base,
		Off: st.Off, Tags: st.Tags, Blocks: st.Blocks, IceSchemas: st.IceSchemas}
	type series struct {
		hash string
		read bool
	}
	at := map[series]int{} // (hash, read) -> index in w.Repeats
	last := map[series]int64{}
	for _, o := range st.Log {
		if !plainSchemaObs(o) {
			w.Log = append(w.Log, o)
			continue
		}
		k := series{o.Hash, o.R}
		i, ok := at[k]
		if !ok {
			i = len(w.Repeats)
			at[k] = i
			w.Repeats = append(w.Repeats, schemaTimes{Hash: o.Hash, T: []int64{o.T}, R: o.R})
		} else {
			w.Repeats[i].T = append(w.Repeats[i].T, o.T-last[k])
		}
		last[k] = o.T
	}
	return packState(w)
}

func setStamped(m map[string]stamped, k string, s stamped) {
	if old, ok := m[k]; !ok || s.newer(old) {
		m[k] = s
	}
}

// dsChange is what one batch contributes to one dataset.
type dsChange struct {
	obs      []fold.Obs
	meta     map[string]stamped
	facets   map[string]stamped
	versions []versionRow
	tags     []tagObs   // tags facets (tags.go)
	blocks   []blockObs // block facets (blocks.go)
	ice      iceSchemas // Iceberg schemas the sync sent (schemarefs.go)
}

type versionRow struct {
	Version, Lifecycle string
	T                  int64
	Snapshot           *olevent.IcebergSnapshot // an Iceberg snapshot's parent, time, operation, summary
}

// changesOf gathers, per dataset key, the observations of the fresh events.
func changesOf(recs []*rec) map[string]*dsChange {
	out := map[string]*dsChange{}
	get := func(k string) *dsChange {
		if out[k] == nil {
			out[k] = &dsChange{meta: map[string]stamped{}, facets: map[string]stamped{}}
		}
		return out[k]
	}
	for _, r := range recs {
		failed := r.Type == olevent.TypeFail || r.Type == olevent.TypeAbort
		for _, d := range r.datasets() {
			if !d.ID.ok() {
				continue
			}
			// the schema a failed or aborted run reports for an output describes what it tried to write
			withSchema := !(failed && isOutput(r, d))
			addDatasetChange(get, d, r, withSchema)
		}
	}
	for _, c := range out {
		c.own() // the fold state keeps changes for minutes: no slice of an event's bytes (owned.go)
	}
	return out
}

func isOutput(r *rec, d *dsRec) bool {
	return slices.Contains(r.Outputs, d)
}

func addDatasetChange(get func(string) *dsChange, d *dsRec, r *rec, withSchema bool) {
	c := get(d.ID.Key)
	base := fold.Obs{T: r.Time, Event: r.ID}
	if d.Lifecycle == fold.LifeDrop || d.Lifecycle == fold.LifeCreate || d.Lifecycle == fold.LifeRename {
		o := base
		o.Kind, o.State = fold.ObsLife, d.Lifecycle
		c.obs = append(c.obs, o)
	}
	if withSchema && d.Schema != nil && d.Lifecycle != fold.LifeDrop {
		o := base
		o.Kind, o.Fields, o.Hash = fold.ObsSchema, d.Schema, fold.SchemaHash(d.Schema) // hashed once, here
		o.R = d.Read
		c.obs = append(c.obs, o)
	}
	addMentions(get, d, base)
	if d.HasLineage {
		o := base
		o.Kind, o.Prod = fold.ObsDecl, r.Producer
		for _, in := range d.Declared {
			if in.ok() && in.Key != d.ID.Key {
				o.Keys = append(o.Keys, in.Key)
			}
		}
		o.DeclFields = declFields(d.DeclFields)
		c.obs = append(c.obs, o)
	}
	addMeta(c, d, r)
	c.ice = c.ice.merge(d.IceSchemas)
	if v := versionOf(d, r.Time); v != nil {
		c.versions = append(c.versions, *v)
	}
}

// addMentions records the fields named by column lineage (output paths and input fields) so they have Field nodes.
// The dataset's own paths are its writer's (or, for a read dataset, observed on read); input fields of another
// dataset are always observed on read: naming a column as a source is reading it.
func addMentions(get func(string) *dsChange, d *dsRec, base fold.Obs) {
	type target struct {
		key  string
		read bool
	}
	byKey := map[target][]string{}
	for _, m := range []map[string][]colInput{d.ColFields, d.DeclFields} {
		for out, ins := range m {
			own := target{d.ID.Key, d.Read}
			byKey[own] = append(byKey[own], out)
			for _, in := range ins {
				if in.DS.ok() && in.Field != "" {
					t := target{in.DS.Key, d.Read || in.DS.Key != d.ID.Key}
					byKey[t] = append(byKey[t], in.Field)
				}
			}
		}
	}
	for t, paths := range byKey {
		sort.Strings(paths)
		o := base
		o.Kind, o.Paths, o.R = fold.ObsMention, compactStrings(paths), t.read
		get(t.key).obs = append(get(t.key).obs, o)
	}
}

func addMeta(c *dsChange, d *dsRec, r *rec) {
	st := func(v any) stamped {
		b, _ := json.Marshal(v)
		return stamped{T: r.Time, E: r.ID, V: b}
	}
	if m := d.Meta; m != nil {
		if m.Description != "" {
			setStamped(c.meta, "description", st(m.Description))
		}
		if len(m.Owners) > 0 {
			setStamped(c.meta, "owners", st(m.Owners))
		}
		if m.Tags != nil { // an empty tags facet removes every tag (version 6)
			setStamped(c.meta, "tags", st(m.Tags))
			c.tags = append(c.tags, tagObs{T: r.Time, E: r.ID, B: r.Principal, V: m.Tags})
		}
		if m.Blocks != nil { // an empty block facet removes every block
			c.blocks = append(c.blocks, blockObs{T: r.Time, E: r.ID, B: r.Principal, V: *m.Blocks})
		}
	}
	for k, v := range d.Facets {
		setStamped(c.facets, k, stamped{T: r.Time, E: r.ID, V: v, R: d.Read})
	}
	for _, k := range d.Deleted {
		setStamped(c.facets, k, stamped{T: r.Time, E: r.ID}) // a deletion: no value
	}
}

func versionOf(d *dsRec, t int64) *versionRow {
	lc := ""
	switch d.Lifecycle {
	case fold.LifeOverwrite, fold.LifeTruncate, fold.LifeCreate:
		lc = d.Lifecycle
	}
	switch {
	case d.Version != "":
		return &versionRow{Version: d.Version, Lifecycle: lc, T: t, Snapshot: d.Snapshot}
	case lc == fold.LifeOverwrite || lc == fold.LifeTruncate:
		return &versionRow{Version: fmt.Sprintf("%s@%d", strings.ToLower(lc), t), Lifecycle: lc, T: t}
	}
	return nil
}

// merge folds a batch's change into the state: its observations into the log (fold.DatasetLog.Merge), its
// metadata, facets, tags, blocks and Iceberg schemas into theirs.
func (st *dsState) merge(c *dsChange) {
	st.Merge(c.obs)
	for k, v := range c.meta {
		setStamped(st.Meta, k, v)
	}
	for k, v := range c.facets {
		setStamped(st.Facets, k, v)
	}
	st.mergeTags(c.tags)
	st.mergeBlocks(c.blocks)
	st.IceSchemas = st.IceSchemas.merge(c.ice)
}

// tagStrings renders tags as "key=value" (or "key") strings, sorted.
func tagStrings(raw json.RawMessage) []string {
	var tags []olevent.Tag
	_ = json.Unmarshal(raw, &tags)
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		if t.Field != "" {
			s = t.Field + ":" + s
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return compactStrings(out)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// facetsJSON renders the latest facet per key as one JSON object (keys sorted by encoding/json).
func (st *dsState) facetsJSON() string {
	m := make(map[string]json.RawMessage, len(st.Facets))
	for k, v := range st.Facets {
		if len(v.V) > 0 {
			m[k] = v.V
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// lastUpdate is the latest event time of the metadata, facets and observations.
func (st *dsState) lastUpdate() int64 {
	var t int64
	for _, m := range []map[string]stamped{st.Meta, st.Facets} {
		for _, v := range m {
			t = max(t, v.T)
		}
	}
	return max(t, st.LatestTime())
}

// declFields flattens the lineage facet's field mappings, sorted.
func declFields(m map[string][]colInput) []fold.DeclField {
	var out []fold.DeclField
	for path, ins := range m {
		for _, in := range ins {
			if in.DS.ok() && in.Field != "" {
				out = append(out, fold.DeclField{In: in.DS.Key, InField: in.Field, Out: path, TT: in.TT})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Out+"\x00"+a.In+"\x00"+a.InField < b.Out+"\x00"+b.In+"\x00"+b.InField
	})
	return out
}
