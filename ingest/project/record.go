package project

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/foldstate"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// ErrUnprojectable marks an event that can never be projected (e.g. its job identity cannot be canonicalised).
// It is deterministic: the consumer quarantines the event.
var ErrUnprojectable = errors.New("event cannot be projected")

// ident is one dataset identifier as an event stated it, canonicalised, and (inside the transaction) resolved to a
// Dataset key. Unresolved carries the reason when it could not be bound.
type ident struct {
	RawNS, RawName string
	Env, NS, Name  string
	Key            string `json:",omitempty"`
	Unresolved     string `json:",omitempty"`
}

func (i *ident) canonical() string { return graph.DatasetIdent(i.Env, i.NS, i.Name) }

// newKey is the key of the Dataset node first created under this identity. Keys hash the namespace's key form
// (without the default port), so the key of an identity is the one projection versions 1 and 2 gave it
// (docs/adr/0026-identity-in-answers.md).
func (i *ident) newKey() string { return graph.DatasetKey(i.Env, normalize.KeyNamespace(i.NS), i.Name) }

// jobKey is the key of a job; like dataset keys it hashes the namespace's key form.
func jobKey(ns, name string) string { return graph.JobKey(normalize.KeyNamespace(ns), name) }

func (i *ident) ok() bool { return i.Unresolved == "" && i.Key != "" }

// colInput is one input field of a column-lineage mapping, with its transformations.
type colInput struct {
	DS    *ident
	Field string
	TT    []olevent.Transformation
}

// dsRec is the part of an event about one dataset (input, output or DatasetEvent subject).
type dsRec struct {
	ID          *ident
	Read        bool                       `json:",omitempty"` // referenced, not written by an owner (ownership.go)
	Version     string                     `json:",omitempty"`
	Scan        string                     `json:",omitempty"` // an input's icebergScanReport.snapshotId as sent (ADR 0084)
	Publication string                     `json:",omitempty"`
	Lifecycle   string                     `json:",omitempty"`
	Prev        *ident                     `json:",omitempty"`
	Schema      []olevent.SchemaField      `json:",omitempty"`
	Symlinks    []*ident                   `json:",omitempty"`
	ColFields   map[string][]colInput      `json:",omitempty"`
	ColDataset  []colInput                 `json:",omitempty"`
	HasLineage  bool                       `json:",omitempty"` // a lineage facet was sent (an empty one withdraws)
	Declared    []*ident                   `json:",omitempty"` // lineage facet: upstream datasets
	DeclFields  map[string][]colInput      `json:",omitempty"`
	Meta        *dsMeta                    `json:",omitempty"`
	Facets      map[string]json.RawMessage `json:",omitempty"`
	Deleted     []string                   `json:",omitempty"` // dataset facets sent with _deleted: true
	IOFacets    map[string]json.RawMessage `json:",omitempty"` // inputFacets or outputFacets of this event
	// Snapshot is the Iceberg snapshot a catalog sync's event records as this dataset's version (ADR 0041).
	Snapshot *olevent.IcebergSnapshot `json:",omitempty"`
	// IceSchemas are the Iceberg schemas a catalog sync's table-state event sends (ADR 0065).
	IceSchemas iceSchemas `json:",omitempty"`
}

// dsMeta is static dataset metadata carried by an event.
type dsMeta struct {
	Description string
	Owners      []olevent.Owner
	Tags        []olevent.Tag
	Blocks      *[]blockRec `json:",omitempty"` // the block facet (blocks.go); nil: none sent
}

// jobRec is the job part of an event. Key is the Job node's key: JobKey(NS, Name), or for a dbt node's job
// DbtJobKey(NS, DbtUniqueID, DbtRole) with NameKey = JobKey(NS, Name), the key runs are stored under (dbtjob.go).
type jobRec struct {
	Key, NS, Name  string
	NameKey        string `json:",omitempty"`
	DbtUniqueID    string `json:",omitempty"`
	DbtRole        string `json:",omitempty"`
	ProcessingType string `json:",omitempty"`
	JobType        string `json:",omitempty"`
	Integration    string `json:",omitempty"`
	Description    string `json:",omitempty"`
	SQL            string `json:",omitempty"`
	SourceCode     string `json:",omitempty"`
	SourceLocation string `json:",omitempty"`
	// Tags is the job tags facet's tags (`key[=value]`, sorted) as a JSON list, "" without a facet (jobtags.go).
	Tags string `json:",omitempty"`
}

// defHash is the hash of the job definition, "" when the event carries none.
func (j *jobRec) defHash() string {
	if j == nil || (j.SQL == "" && j.SourceCode == "" && j.SourceLocation == "") {
		return ""
	}
	return graph.JobVersionKey("def", j.SQL+"\x1e"+j.SourceCode+"\x1e"+j.SourceLocation)
}

// parentRec references a parent or root run.
type parentRec struct {
	RunID  string
	JobKey string
}

// rec is the projector's internal form of one event: canonical, resolved, and stored as the Event payload so
// derived state can be recomputed from the set of applied events.
type rec struct {
	ID        string // the event id as the producer sent it (or the deterministic id)
	Key       string `json:",omitempty"` // the Event node key: graph.EventKey(principal, ID)
	Digest    string `json:",omitempty"` // sha256 of the canonical event: same id, other digest = conflict
	Principal string `json:",omitempty"` // the producer principal that sent it
	Kind      string
	Type      string `json:",omitempty"`
	Time      int64
	Recv      int64
	Producer  string
	RunID     string                     `json:",omitempty"`
	Job       *jobRec                    `json:",omitempty"`
	RunFacets map[string]json.RawMessage `json:",omitempty"`
	Deleted   []string                   `json:",omitempty"`
	Parent    *parentRec                 `json:",omitempty"`
	Root      *parentRec                 `json:",omitempty"`
	NomStart  *int64                     `json:",omitempty"`
	NomEnd    *int64                     `json:",omitempty"`
	ErrorMsg  string                     `json:",omitempty"`
	Inputs    []*dsRec                   `json:",omitempty"`
	Outputs   []*dsRec                   `json:",omitempty"`
	Subject   *dsRec                     `json:",omitempty"`
	PubRunID  string                     `json:",omitempty"` // DatasetEvent carrying headwater_publication for a run
	pos       foldstate.Pos              // where the event was read from (Envelope.Pos); not stored in the payload
	src       int                        // bytes of the event's source its strings share (memsize.go); not stored
	srcBase   uintptr                    // where those bytes are (not a reference: the strings keep them)
}

// key is the Event node key (payloads written before projection version 2 carry none: their key is the id).
func (r *rec) key() string {
	if r.Key != "" {
		return r.Key
	}
	return r.ID
}

// runKey is the run the event is stored under: a RunEvent's (runId, job) run, or for a DatasetEvent naming a
// publication run, that runId's group key (read by every run of that runId); "" for other events.
func (r *rec) runKey() string {
	switch {
	case r.PubRunID != "":
		return graph.RunKey(r.PubRunID, "")
	case r.RunID != "" && r.Job != nil:
		return graph.RunKey(r.RunID, r.Job.nameKey())
	}
	return ""
}

// pubFacetKey is Headwater's own publication facet.
const pubFacetKey = "headwater_publication"

// buildRec canonicalises an envelope into a rec. Dataset identifiers that cannot be canonicalised are kept with
// an Unresolved reason; a job that cannot be canonicalised makes the event unprojectable.
func buildRec(env Envelope, canon Canonicalizer) (*rec, error) {
	ev := env.Event
	if ev.ID == "" {
		return nil, fmt.Errorf("%w: empty event id", ErrUnprojectable)
	}
	r := &rec{ID: ev.ID, Key: graph.EventKey(env.Principal, ev.ID), Digest: ev.ContentDigest(), Principal: env.Principal, Kind: string(ev.Kind),
		Type: ev.EventType, Time: graph.Millis(ev.EventTime), Recv: graph.Millis(env.ReceivedAt), Producer: ev.Producer,
		pos: env.Pos, src: cap(ev.Raw), srcBase: uintptr(unsafe.Pointer(unsafe.SliceData(ev.Raw)))}
	if ev.Job != nil {
		j, err := buildJob(ev.Job, canon)
		if err != nil {
			return nil, err
		}
		applyDbtIdentity(j, ev.Job, env.Owned)
		r.Job = j
	}
	switch ev.Kind {
	case olevent.KindRun:
		if ev.Run == nil || ev.Run.ID == "" || r.Job == nil {
			return nil, fmt.Errorf("%w: run event %s without run id or job", ErrUnprojectable, ev.ID)
		}
		fillRun(r, ev.Run, canon)
	case olevent.KindJob:
		if r.Job == nil {
			return nil, fmt.Errorf("%w: job event %s without job", ErrUnprojectable, ev.ID)
		}
	case olevent.KindDataset:
		if ev.Dataset == nil {
			return nil, fmt.Errorf("%w: dataset event %s without dataset", ErrUnprojectable, ev.ID)
		}
		r.Subject = buildDS(ev.Dataset, canon)
		r.PubRunID = publicationRunID(ev.Dataset)
	default:
		return nil, fmt.Errorf("%w: unknown event kind %q", ErrUnprojectable, ev.Kind)
	}
	for i := range ev.Inputs {
		r.Inputs = append(r.Inputs, buildDS(&ev.Inputs[i], canon))
	}
	for i := range ev.Outputs {
		r.Outputs = append(r.Outputs, buildDS(&ev.Outputs[i], canon))
	}
	applyOwnership(r, ownedNow(env.Owned, canon))
	return r, nil
}

func buildJob(j *olevent.Job, canon Canonicalizer) (*jobRec, error) {
	ns, nm, err := canon.Job(j.Namespace, j.Name)
	if err != nil {
		return nil, fmt.Errorf("%w: job %s/%s: %w", ErrUnprojectable, j.Namespace, j.Name, err)
	}
	return &jobRec{Key: jobKey(ns, nm), NS: ns, Name: nm, ProcessingType: strings.ToUpper(j.ProcessingType),
		JobType: j.JobType, Integration: j.Integration, Description: j.Description, SQL: j.SQL,
		SourceCode: j.SourceCode, SourceLocation: j.SourceLocation, Tags: jobTagsJSON(j.Tags)}, nil
}

func fillRun(r *rec, run *olevent.Run, canon Canonicalizer) {
	r.RunID = strings.ToLower(run.ID)
	r.RunFacets = run.Facets
	r.Deleted = run.Deleted
	r.ErrorMsg = run.ErrorMessage
	r.Parent = parentOf(run.Parent, canon)
	r.Root = parentOf(run.Root, canon)
	if run.NominalStart != nil {
		v := graph.Millis(*run.NominalStart)
		r.NomStart = &v
	}
	if run.NominalEnd != nil {
		v := graph.Millis(*run.NominalEnd)
		r.NomEnd = &v
	}
}

func parentOf(p *olevent.ParentRef, canon Canonicalizer) *parentRec {
	if p == nil || p.RunID == "" {
		return nil
	}
	out := &parentRec{RunID: strings.ToLower(p.RunID)}
	if ns, nm, err := canon.Job(p.JobNamespace, p.JobName); err == nil {
		out.JobKey = jobKey(ns, nm)
	}
	return out
}

func newIdent(ns, name string, canon Canonicalizer) *ident {
	id := &ident{RawNS: ns, RawName: name}
	env, cns, cnm, err := canon.Dataset(ns, name)
	if err != nil {
		id.Unresolved = "cannot canonicalise: " + err.Error()
		return id
	}
	id.Env, id.NS, id.Name = env, cns, cnm
	return id
}

func buildDS(d *olevent.Dataset, canon Canonicalizer) *dsRec {
	out := &dsRec{ID: newIdent(d.Namespace, d.Name, canon), Version: d.Version, Scan: d.ScanSnapshot, Schema: d.Schema, Facets: d.Facets,
		Deleted: d.Deleted, IOFacets: d.InputFacets}
	if len(d.OutputFacets) > 0 {
		out.IOFacets = d.OutputFacets
	}
	if d.Publication != nil {
		out.Publication = strings.ToUpper(d.Publication.State)
	}
	if d.Iceberg != nil && d.Iceberg.Snapshot != nil {
		out.Snapshot = d.Iceberg.Snapshot
	}
	if d.Iceberg != nil && len(d.Iceberg.Schemas) > 0 {
		out.IceSchemas = iceSchemas(d.Iceberg.Schemas)
	}
	if d.Lifecycle != nil {
		out.Lifecycle = strings.ToUpper(d.Lifecycle.State)
		if p := d.Lifecycle.PreviousIdentifier; p != nil && out.Lifecycle == fold.LifeRename {
			out.Prev = newIdent(p.Namespace, p.Name, canon)
		}
	}
	for _, s := range d.Symlinks {
		out.Symlinks = append(out.Symlinks, newIdent(s.Namespace, s.Name, canon))
	}
	if cl := d.ColumnLineage; cl != nil {
		out.ColFields = colInputs(cl.Fields, canon)
		out.ColDataset = colList(cl.Dataset, canon)
	}
	if lf := d.Lineage; lf != nil {
		out.HasLineage = true
		for _, in := range lf.Inputs {
			out.Declared = append(out.Declared, newIdent(in.Namespace, in.Name, canon))
		}
		out.DeclFields = colInputs(lf.Fields, canon)
	}
	if d.Description != "" || len(d.Owners) > 0 || d.Tags != nil || d.Blocks != nil { // an empty tags facet is kept: it removes them
		out.Meta = &dsMeta{Description: d.Description, Owners: d.Owners, Tags: d.Tags, Blocks: blockRecs(d.Blocks, canon)}
	}
	return out
}

func colInputs(m map[string][]olevent.InputField, canon Canonicalizer) map[string][]colInput {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]colInput, len(m))
	for path, ins := range m {
		out[path] = colList(ins, canon)
	}
	return out
}

func colList(ins []olevent.InputField, canon Canonicalizer) []colInput {
	out := make([]colInput, 0, len(ins))
	for _, in := range ins {
		out = append(out, colInput{DS: newIdent(in.Namespace, in.Name, canon), Field: in.Field, TT: in.Transformations})
	}
	return out
}

// publicationRunID reads the runId Headwater's publication facet carries when a quality gate sends it later as a
// DatasetEvent (see docs/adr/0006-projection-and-intervals.md).
func publicationRunID(d *olevent.Dataset) string {
	raw, ok := d.Facets[pubFacetKey]
	if !ok {
		raw, ok = d.OutputFacets[pubFacetKey]
	}
	if !ok {
		return ""
	}
	var f struct {
		RunID string `json:"runId"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return ""
	}
	return strings.ToLower(f.RunID)
}

// idents returns every dataset identifier of the rec, in a deterministic order.
func (r *rec) idents() []*ident {
	var out []*ident
	for _, d := range r.datasets() {
		out = append(out, d.ID)
		if d.Prev != nil {
			out = append(out, d.Prev)
		}
		out = append(out, d.Symlinks...)
		out = append(out, d.Declared...)
		out = append(out, colIdents(d.ColFields)...)
		for _, c := range d.ColDataset {
			out = append(out, c.DS)
		}
		out = append(out, colIdents(d.DeclFields)...)
	}
	return out
}

func colIdents(m map[string][]colInput) []*ident {
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []*ident
	for _, p := range paths {
		for _, c := range m[p] {
			out = append(out, c.DS)
		}
	}
	return out
}

// datasets returns inputs, outputs and the DatasetEvent subject.
func (r *rec) datasets() []*dsRec {
	out := make([]*dsRec, 0, len(r.Inputs)+len(r.Outputs)+1)
	out = append(out, r.Inputs...)
	out = append(out, r.Outputs...)
	if r.Subject != nil {
		out = append(out, r.Subject)
	}
	return out
}
