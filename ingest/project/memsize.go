package project

import (
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Resident-size estimates of what the projector keeps in memory between transactions: a dataset's fold state
// (dsCached.Size, which the fold-state cache sums against --consumer-fold-state-mib), a job's (jobCached.Size,
// against --consumer-job-state-mib; TestJobStateSizeEstimatesTheResidentHeap) and a committed event
// (rec.size, which the recent-events cache sums against --consumer-recent-events-mib). They count the heap a
// value keeps reachable: struct and slice backing arrays by their Go sizes, string and raw-JSON bytes by length,
// maps by an estimate of their slots. Estimates, not measurements: TestFoldStateResidentSizePerDataset and
// TestRecentEventResidentSize hold them within a third of the heap measured on built values, so a new field that
// holds memory and is not counted here is noticed (docs/adr/0046-memory-bounds-by-bytes.md).

const (
	ptrSize   = int64(unsafe.Sizeof(uintptr(0)))
	strHeader = int64(unsafe.Sizeof(""))
	anyHeader = int64(unsafe.Sizeof(any(nil)))
	// mapHeader is a map's own header and directory; each slot is its key and value plus a control byte, at a
	// load of 7/8, and a small map (up to 8 entries) is one group of 8 slots.
	mapHeader = 48
)

// srcRange is an event's source bytes (rec.srcBase, rec.src): strings and raw values inside it take no memory
// of their own (jsontree.Parse shares them), so they are counted once, as the source. The zero range holds
// nothing (values that own their memory: the fold state's).
type srcRange struct {
	base uintptr
	n    int
}

func (sr srcRange) holds(p unsafe.Pointer) bool {
	u := uintptr(p)
	return sr.n > 0 && u >= sr.base && u < sr.base+uintptr(sr.n)
}

// str is the bytes a string keeps of its own.
func (sr srcRange) str(s string) int64 {
	if len(s) == 0 || sr.holds(unsafe.Pointer(unsafe.StringData(s))) {
		return 0
	}
	return int64(len(s))
}

// raw is the bytes a raw value keeps of its own.
func (sr srcRange) raw(b []byte) int64 {
	if cap(b) == 0 || sr.holds(unsafe.Pointer(unsafe.SliceData(b))) {
		return 0
	}
	return int64(cap(b))
}

// mapBytes estimates a map of n entries whose key and value take kv bytes inline.
func mapBytes(n int, kv int64) int64 {
	if n == 0 {
		return 0
	}
	slots := max(int64(8), int64(n)*8/7+1)
	return mapHeader + slots*(kv+1)
}

func strsBytes(ss []string, sr srcRange) int64 {
	n := int64(cap(ss)) * strHeader
	for _, s := range ss {
		n += sr.str(s)
	}
	return n
}

func rawMapBytes(m map[string]json.RawMessage, sr srcRange) int64 {
	n := mapBytes(len(m), strHeader+int64(unsafe.Sizeof(json.RawMessage(nil))))
	for k, v := range m {
		n += sr.str(k) + sr.raw(v)
	}
	return n
}

func schemaBytes(fs []olevent.SchemaField, sr srcRange) int64 {
	n := int64(cap(fs)) * int64(unsafe.Sizeof(olevent.SchemaField{}))
	for i := range fs {
		f := &fs[i]
		n += sr.str(f.Path) + sr.str(f.Type) + sr.str(f.Description) + sr.str(f.FieldID)
	}
	return n
}

func transformBytes(tt []olevent.Transformation, sr srcRange) int64 {
	n := int64(cap(tt)) * int64(unsafe.Sizeof(olevent.Transformation{}))
	for i := range tt {
		n += sr.str(tt[i].Type) + sr.str(tt[i].Subtype) + sr.str(tt[i].Description)
	}
	return n
}

// obsBytes is what an observation holds beyond its slot in the log.
func obsBytes(o *fold.Obs) int64 {
	n := int64(len(o.Event)+len(o.Hash)+len(o.State)+len(o.Prod)) + schemaBytes(o.Fields, srcRange{}) +
		strsBytes(o.Paths, srcRange{}) + strsBytes(o.Keys, srcRange{})
	n += int64(cap(o.DeclFields)) * int64(unsafe.Sizeof(fold.DeclField{}))
	for i := range o.DeclFields {
		d := &o.DeclFields[i]
		n += int64(len(d.In)+len(d.InField)+len(d.Out)) + transformBytes(d.TT, srcRange{})
	}
	return n
}

func obsSliceBytes(log []fold.Obs) int64 {
	n := int64(cap(log)) * int64(unsafe.Sizeof(fold.Obs{}))
	for i := range log {
		n += obsBytes(&log[i])
	}
	return n
}

func stampedMapBytes(m map[string]stamped) int64 {
	n := mapBytes(len(m), strHeader+int64(unsafe.Sizeof(stamped{})))
	for k, v := range m {
		n += int64(len(k) + len(v.E) + cap(v.V))
	}
	return n
}

func offBytes(m map[string]int64) int64 {
	n := mapBytes(len(m), strHeader+8)
	for k := range m {
		n += int64(len(k))
	}
	return n
}

// size is the state's resident bytes (the struct, its log, schemas, metadata, facets, base and offsets).
func (st *dsState) size() int64 {
	if st == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*st)) + obsSliceBytes(st.Log) + stampedMapBytes(st.Meta) + stampedMapBytes(st.Facets) +
		int64(len(st.FieldsSig)) + offBytes(st.Off) + tagLogBytes(st.Tags)
	n += mapBytes(len(st.Schemas), strHeader+int64(unsafe.Sizeof([]olevent.SchemaField(nil))))
	for h, fs := range st.Schemas {
		n += int64(len(h)) + schemaBytes(fs, srcRange{})
	}
	if b := st.Base; b != nil {
		n += int64(unsafe.Sizeof(*b)) + int64(cap(b.Hists))*int64(unsafe.Sizeof(fold.FieldHist{}))
		for i := range b.Hists {
			h := &b.Hists[i]
			n += int64(len(h.Path)+len(h.Type)+len(h.Description)+len(h.FieldID)) +
				int64(cap(h.Names))*int64(unsafe.Sizeof(fold.FieldName{}))
			for _, nm := range h.Names {
				n += int64(len(nm.P))
			}
		}
	}
	return n
}

// size is the change's resident bytes.
func (c *dsChange) size() int64 {
	n := int64(unsafe.Sizeof(*c)) + obsSliceBytes(c.obs) + stampedMapBytes(c.meta) + stampedMapBytes(c.facets) +
		tagLogBytes(c.tags)
	n += int64(cap(c.versions)) * int64(unsafe.Sizeof(versionRow{}))
	for i := range c.versions {
		v := &c.versions[i]
		n += int64(len(v.Version)+len(v.Lifecycle)) + snapshotBytes(v.Snapshot)
	}
	return n
}

func snapshotBytes(s *olevent.IcebergSnapshot) int64 {
	if s == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*s)) + int64(len(s.ID)+len(s.Parent)+len(s.Operation)) +
		mapBytes(len(s.Summary), 2*strHeader)
	for k, v := range s.Summary {
		n += int64(len(k) + len(v))
	}
	return n
}

// anyBytes estimates a derived property value as the transaction writes it (scalars, strings, lists, maps).
func anyBytes(v any) int64 {
	switch x := v.(type) {
	case nil, bool, int, int64, float64:
		return 0
	case string:
		return strHeader + int64(len(x))
	case []byte:
		return int64(cap(x))
	case []string:
		return strsBytes(x, srcRange{})
	case []int64:
		return int64(cap(x)) * 8
	case []any:
		n := int64(cap(x)) * anyHeader
		for _, e := range x {
			n += anyBytes(e)
		}
		return n
	case map[string]any:
		n := mapBytes(len(x), strHeader+anyHeader)
		for k, e := range x {
			n += int64(len(k)) + anyBytes(e)
		}
		return n
	default:
		return 2 * anyHeader
	}
}

// Size is the cached state's resident bytes: the state, the changes kept for a refused write, and the derived
// properties last written (foldstate.Sizer).
func (c *dsCached) Size() int64 {
	n := int64(unsafe.Sizeof(*c)) + c.st.size() + int64(cap(c.pending))*ptrSize
	for _, p := range c.pending {
		n += p.size()
	}
	n += int64(cap(c.hists)) * int64(unsafe.Sizeof(fold.FieldHist{}))
	for i := range c.hists {
		h := &c.hists[i]
		n += int64(len(h.Path)) + int64(cap(h.Names))*int64(unsafe.Sizeof(fold.FieldName{}))
		for _, nm := range h.Names {
			n += int64(len(nm.P))
		}
	}
	n += mapBytes(len(c.last), strHeader+anyHeader)
	for k, v := range c.last {
		n += int64(len(k)) + anyBytes(v)
	}
	return n
}

func identBytes(i *ident, sr srcRange) int64 {
	if i == nil {
		return 0
	}
	return int64(unsafe.Sizeof(*i)) + sr.str(i.RawNS) + sr.str(i.RawName) + sr.str(i.Env) + sr.str(i.NS) +
		sr.str(i.Name) + sr.str(i.Key) + sr.str(i.Unresolved)
}

func colInputsBytes(cs []colInput, sr srcRange) int64 {
	n := int64(cap(cs)) * int64(unsafe.Sizeof(colInput{}))
	for i := range cs {
		n += identBytes(cs[i].DS, sr) + sr.str(cs[i].Field) + transformBytes(cs[i].TT, sr)
	}
	return n
}

func colMapBytes(m map[string][]colInput, sr srcRange) int64 {
	n := mapBytes(len(m), strHeader+int64(unsafe.Sizeof([]colInput(nil))))
	for k, v := range m {
		n += sr.str(k) + colInputsBytes(v, sr)
	}
	return n
}

func dsRecBytes(d *dsRec, sr srcRange) int64 {
	if d == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*d)) + identBytes(d.ID, sr) + identBytes(d.Prev, sr) + sr.str(d.Version) + sr.str(d.Scan) +
		sr.str(d.Publication) + sr.str(d.Lifecycle) + schemaBytes(d.Schema, sr) + colMapBytes(d.ColFields, sr) +
		colInputsBytes(d.ColDataset, sr) + colMapBytes(d.DeclFields, sr) + rawMapBytes(d.Facets, sr) +
		strsBytes(d.Deleted, sr) + rawMapBytes(d.IOFacets, sr) + snapshotBytes(d.Snapshot)
	n += int64(cap(d.Symlinks)+cap(d.Declared)) * ptrSize
	for _, s := range d.Symlinks {
		n += identBytes(s, sr)
	}
	for _, s := range d.Declared {
		n += identBytes(s, sr)
	}
	if m := d.Meta; m != nil {
		n += int64(unsafe.Sizeof(*m)) + sr.str(m.Description) +
			int64(cap(m.Owners))*int64(unsafe.Sizeof(olevent.Owner{})) +
			int64(cap(m.Tags))*int64(unsafe.Sizeof(olevent.Tag{}))
		for _, o := range m.Owners {
			n += sr.str(o.Name) + sr.str(o.Type)
		}
		for _, t := range m.Tags {
			n += sr.str(t.Key) + sr.str(t.Value) + sr.str(t.Source) + sr.str(t.Field)
		}
	}
	return n
}

// size is a committed event's resident bytes as the recent-events cache keeps it: the rec and what it points
// to, plus the event's source bytes, which its strings share (jsontree.Parse), so one string kept keeps them
// all; strings inside the source are counted once, as the source.
func (r *rec) size() int64 {
	sr := srcRange{base: r.srcBase, n: r.src}
	n := int64(unsafe.Sizeof(*r)) + int64(r.src) + sr.str(r.ID) + sr.str(r.Key) + sr.str(r.Digest) +
		sr.str(r.Principal) + sr.str(r.Kind) + sr.str(r.Type) + sr.str(r.Producer) + sr.str(r.RunID) +
		sr.str(r.ErrorMsg) + sr.str(r.PubRunID) + sr.str(r.pos.Part) + rawMapBytes(r.RunFacets, sr) +
		strsBytes(r.Deleted, sr)
	if j := r.Job; j != nil {
		n += int64(unsafe.Sizeof(*j))
		for _, s := range []string{j.Key, j.NS, j.Name, j.NameKey, j.DbtUniqueID, j.DbtRole, j.ProcessingType,
			j.JobType, j.Integration, j.Description, j.SQL, j.SourceCode, j.SourceLocation, j.Tags} {
			n += sr.str(s)
		}
	}
	for _, p := range []*parentRec{r.Parent, r.Root} {
		if p != nil {
			n += int64(unsafe.Sizeof(*p)) + sr.str(p.RunID) + sr.str(p.JobKey)
		}
	}
	if r.NomStart != nil {
		n += 8
	}
	if r.NomEnd != nil {
		n += 8
	}
	n += int64(cap(r.Inputs)+cap(r.Outputs)) * ptrSize
	for _, d := range r.Inputs {
		n += dsRecBytes(d, sr)
	}
	for _, d := range r.Outputs {
		n += dsRecBytes(d, sr)
	}
	return n + dsRecBytes(r.Subject, sr)
}

// tagLogBytes is the tag log's resident bytes (tags.go).
func tagLogBytes(log []tagObs) int64 {
	n := int64(cap(log)) * int64(unsafe.Sizeof(tagObs{}))
	for _, o := range log {
		n += int64(len(o.E)+len(o.B)) + int64(cap(o.V))*int64(unsafe.Sizeof(olevent.Tag{}))
		for _, t := range o.V {
			n += int64(len(t.Key) + len(t.Value) + len(t.Source) + len(t.Field))
		}
	}
	return n
}

// Size is a job's cached fold state's resident bytes (foldstate.Sizer, which the job fold-state cache sums against
// --consumer-job-state-mib): the head checkpoint, the runs since it, the digests of the edges and COLUMN_FEEDS it
// last wrote (with the datasets' fieldsSig, ADR 0077), the evidence last written and the declarations
// (docs/adr/0079-job-state-saved-write-behind.md, amendment).
func (c *jobCached) Size() int64 {
	n := int64(unsafe.Sizeof(*c)) + checkpointBytes(c.ck) + anyMapBytes(c.edges) + anyMapBytes(c.ev) +
		anyMapBytes(c.cols) + strsBytes(c.colOuts, srcRange{}) + strMapBytes(c.colSigs)
	n += mapBytes(len(c.runs), strHeader+int64(unsafe.Sizeof(fold.Run{})))
	for k, r := range c.runs {
		n += int64(len(k)) + runBytes(&r)
	}
	n += int64(cap(c.decls)) * int64(unsafe.Sizeof(fold.Decl{}))
	for i := range c.decls {
		d := &c.decls[i]
		n += int64(len(d.ID)+len(d.Producer)) + boolMapBytes(d.Inputs) + boolMapBytes(d.Outputs)
	}
	return n
}

func anyMapBytes(m map[string]any) int64 {
	n := mapBytes(len(m), strHeader+anyHeader)
	for k, v := range m {
		n += int64(len(k)) + anyBytes(v)
	}
	return n
}

func strMapBytes(m map[string]string) int64 {
	n := mapBytes(len(m), 2*strHeader)
	for k, v := range m {
		n += int64(len(k) + len(v))
	}
	return n
}

func boolMapBytes(m map[string]bool) int64 {
	n := mapBytes(len(m), strHeader+1)
	for k := range m {
		n += int64(len(k))
	}
	return n
}

// runBytes is what a run holds beyond its slot (its map slot in jobCached.runs).
func runBytes(r *fold.Run) int64 {
	n := int64(len(r.Key)+len(r.ID)+len(r.State)+len(r.JobVersion)) + int64(cap(r.IO))*int64(unsafe.Sizeof(fold.IO{}))
	for i := range r.IO {
		io := &r.IO[i]
		n += int64(len(io.DS)+len(io.Pub)+len(io.Producer)+len(io.Version)) + strsBytes(io.EventIDs, srcRange{}) +
			colsDocBytes(io.Cols) + strMapBytes(io.Schema)
	}
	return n
}

func colsDocBytes(d *fold.ColsDoc) int64 {
	if d == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*d)) + int64(cap(d.Fields))*int64(unsafe.Sizeof(fold.ColField{})) +
		int64(cap(d.Dataset))*int64(unsafe.Sizeof(fold.ColDep{}))
	for i := range d.Fields {
		f := &d.Fields[i]
		n += int64(len(f.In)+len(f.InField)+len(f.Out)) + transformBytes(f.TT, srcRange{})
	}
	for i := range d.Dataset {
		n += int64(len(d.Dataset[i].In)) + transformBytes(d.Dataset[i].TT, srcRange{})
	}
	return n
}

// intervalsBytes is an interval fold's (fold.EdgeAgg.Fold and the column aggregates') closed and open intervals.
func intervalsBytes(closed []graph.Interval, open *graph.Interval) int64 {
	n := int64(cap(closed)) * int64(unsafe.Sizeof(graph.Interval{}))
	for i := range closed {
		n += int64(len(closed[i].Pub))
	}
	if open != nil {
		n += int64(unsafe.Sizeof(*open)) + int64(len(open.Pub))
	}
	return n
}

// checkpointBytes is a job's head checkpoint's resident bytes: per subject its edge aggregate, the column and
// indirect aggregates and the fieldsSig of each dataset the column fold resolved.
func checkpointBytes(ck *fold.Checkpoint) int64 {
	if ck == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*ck)) + int64(len(ck.LatestVersion.RunID)+len(ck.LatestVersion.Version)) +
		strMapBytes(ck.FieldSigs)
	n += mapBytes(len(ck.Subjects), strHeader+ptrSize)
	for k, a := range ck.Subjects {
		n += int64(len(k)) + int64(unsafe.Sizeof(*a)) + intervalsBytes(a.Fold.Closed, a.Fold.Open) +
			strsBytes(a.EventIDs, srcRange{}) + int64(len(a.Latest.RunID)+len(a.Latest.RunState)+
			len(a.Latest.JobVersion)+len(a.Latest.Producer)+len(a.Latest.Via))
	}
	n += mapBytes(len(ck.Cols), strHeader+ptrSize)
	for k, a := range ck.Cols {
		n += int64(len(k)) + int64(unsafe.Sizeof(*a)) + intervalsBytes(a.Fold.Closed, a.Fold.Open) +
			int64(len(a.M.Out)+len(a.M.In)+len(a.M.InField)+len(a.M.OutField)+len(a.From)+len(a.To)+len(a.RunID)) +
			transformBytes(a.TT, srcRange{})
	}
	n += mapBytes(len(ck.Inds), strHeader+ptrSize)
	for k, a := range ck.Inds {
		n += int64(len(k)) + int64(unsafe.Sizeof(*a)) + intervalsBytes(a.Fold.Closed, a.Fold.Open) +
			int64(len(a.In)+len(a.Out)) + strsBytes(a.Subtypes, srcRange{})
	}
	return n
}
