package decode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/facets"
	"github.com/headwater-data/headwater/ingest/olevent/jsontree"
)

// What the single pass (ADR 0037) derives from its one parse tree: the generic document the envelope checks and
// the JSON Schema read, the envelope as wireEvent, and the canonical content id.

// opaque stands for every facet map in the envelope document: the envelope schema constrains a facet map's type
// only (object or null) and never reads its keys or a facet, so they are not materialised. Nothing writes to it.
var opaque = map[string]any{}

// envelopeDoc is the generic tree (map[string]any, []any, string, json.Number, bool, nil; as
// jsonschema.UnmarshalJSON gives it) of everything the envelope checks read; facet bodies are opaque.
func envelopeDoc(t *jsontree.Doc) map[string]any {
	root := t.Root()
	ms := t.Members(root)
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		switch m.Key {
		case "run", "job", "dataset":
			out[m.Key] = entityDoc(t, m.Val)
		case "inputs", "outputs":
			if t.Kind(m.Val) != jsontree.Array {
				out[m.Key] = generic(t, m.Val)
				continue
			}
			es := t.Elems(m.Val)
			list := make([]any, len(es))
			for i, e := range es {
				list[i] = entityDoc(t, e)
			}
			out[m.Key] = list
		default:
			out[m.Key] = generic(t, m.Val)
		}
	}
	return out
}

// entityDoc is a run, job or dataset object with its facet maps' bodies left opaque.
func entityDoc(t *jsontree.Doc, i int32) any {
	if t.Kind(i) != jsontree.Object {
		return generic(t, i)
	}
	ms := t.Members(i)
	out := make(map[string]any, len(ms))
	for _, m := range ms {
		switch m.Key {
		case "facets", "inputFacets", "outputFacets":
			out[m.Key] = facetMapDoc(t, m.Val)
		default:
			out[m.Key] = generic(t, m.Val)
		}
	}
	return out
}

// facetMapDoc is a facet map as the schema sees it: its type only (the Facets definition is an object or null).
func facetMapDoc(t *jsontree.Doc, i int32) any {
	if t.Kind(i) != jsontree.Object {
		return generic(t, i)
	}
	return opaque
}

// generic materialises node i fully.
func generic(t *jsontree.Doc, i int32) any {
	n := t.Node(i)
	switch n.Kind {
	case jsontree.Object:
		ms := t.Members(i)
		out := make(map[string]any, len(ms))
		for _, m := range ms {
			out[m.Key] = generic(t, m.Val)
		}
		return out
	case jsontree.Array:
		es := t.Elems(i)
		out := make([]any, len(es))
		for k, e := range es {
			out[k] = generic(t, e)
		}
		return out
	case jsontree.String:
		return n.Str
	case jsontree.Number:
		return json.Number(n.Str)
	case jsontree.True:
		return true
	case jsontree.False:
		return false
	}
	return nil
}

// wireFrom reads the envelope from the tree as goccy/go-json's Unmarshal into wireEvent reads it: exact keys (the
// case check refused near misses before), null leaves a field zero, and any other type mismatch fails the whole
// event. The facet maps keep each facet's bytes as sent. The error names the first mismatch.
func wireFrom(t *jsontree.Doc) (wireEvent, string) {
	var w wireEvent
	for _, m := range t.Members(t.Root()) {
		var bad string
		switch m.Key {
		case "eventId":
			bad = strInto(t, m.Val, &w.EventID, m.Key)
		case "eventTime":
			bad = strInto(t, m.Val, &w.EventTime, m.Key)
		case "eventType":
			bad = strInto(t, m.Val, &w.EventType, m.Key)
		case "producer":
			bad = strInto(t, m.Val, &w.Producer, m.Key)
		case "schemaURL":
			bad = strInto(t, m.Val, &w.SchemaURL, m.Key)
		case "run":
			w.Run, bad = runFrom(t, m.Val)
		case "job":
			w.Job, bad = jobFrom(t, m.Val)
		case "inputs":
			w.Inputs, bad = datasetsFrom(t, m.Val, m.Key)
		case "outputs":
			w.Outputs, bad = datasetsFrom(t, m.Val, m.Key)
		case "dataset":
			w.Dataset, bad = datasetPtrFrom(t, m.Val)
		}
		if bad != "" {
			return wireEvent{}, bad
		}
	}
	return w, ""
}

func strInto(t *jsontree.Doc, i int32, dst *string, field string) string {
	switch n := t.Node(i); n.Kind {
	case jsontree.String:
		*dst = n.Str
	case jsontree.Null:
	default:
		return field + " must be a string"
	}
	return ""
}

func facetsFrom(t *jsontree.Doc, i int32, field string) (map[string]json.RawMessage, string) {
	switch t.Kind(i) {
	case jsontree.Null:
		return nil, ""
	case jsontree.Object:
	default:
		return nil, field + " must be an object"
	}
	ms := t.Members(i)
	out := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		out[m.Key] = t.Raw(m.Val)
	}
	return out, ""
}

// treeOf hands a facet map's node to the facet parsers (zero when it is not an object).
func treeOf(t *jsontree.Doc, i int32) facets.Tree {
	if t.Kind(i) != jsontree.Object {
		return facets.Tree{}
	}
	return facets.Tree{Doc: t, Node: i}
}

func runFrom(t *jsontree.Doc, i int32) (*facets.WireRun, string) {
	switch t.Kind(i) {
	case jsontree.Null:
		return nil, ""
	case jsontree.Object:
	default:
		return nil, "run must be an object"
	}
	r := &facets.WireRun{}
	for _, m := range t.Members(i) {
		var bad string
		switch m.Key {
		case "runId":
			bad = strInto(t, m.Val, &r.RunID, "run.runId")
		case "facets":
			r.Facets, bad = facetsFrom(t, m.Val, "run.facets")
			r.FacetsTree = treeOf(t, m.Val)
		}
		if bad != "" {
			return nil, bad
		}
	}
	return r, ""
}

func jobFrom(t *jsontree.Doc, i int32) (*facets.WireJob, string) {
	switch t.Kind(i) {
	case jsontree.Null:
		return nil, ""
	case jsontree.Object:
	default:
		return nil, "job must be an object"
	}
	j := &facets.WireJob{}
	for _, m := range t.Members(i) {
		var bad string
		switch m.Key {
		case "namespace":
			bad = strInto(t, m.Val, &j.Namespace, "job.namespace")
		case "name":
			bad = strInto(t, m.Val, &j.Name, "job.name")
		case "facets":
			j.Facets, bad = facetsFrom(t, m.Val, "job.facets")
			j.FacetsTree = treeOf(t, m.Val)
		}
		if bad != "" {
			return nil, bad
		}
	}
	return j, ""
}

func datasetsFrom(t *jsontree.Doc, i int32, field string) ([]facets.WireDataset, string) {
	switch t.Kind(i) {
	case jsontree.Null:
		return nil, ""
	case jsontree.Array:
	default:
		return nil, field + " must be an array"
	}
	es := t.Elems(i)
	out := make([]facets.WireDataset, len(es))
	for k, e := range es {
		if t.Kind(e) == jsontree.Null {
			continue
		}
		if bad := datasetInto(t, e, &out[k], field); bad != "" {
			return nil, bad
		}
	}
	return out, ""
}

func datasetPtrFrom(t *jsontree.Doc, i int32) (*facets.WireDataset, string) {
	if t.Kind(i) == jsontree.Null {
		return nil, ""
	}
	d := &facets.WireDataset{}
	if bad := datasetInto(t, i, d, "dataset"); bad != "" {
		return nil, bad
	}
	return d, ""
}

func datasetInto(t *jsontree.Doc, i int32, d *facets.WireDataset, field string) string {
	if t.Kind(i) != jsontree.Object {
		return field + " must hold objects"
	}
	for _, m := range t.Members(i) {
		var bad string
		switch m.Key {
		case "namespace":
			bad = strInto(t, m.Val, &d.Namespace, field+".namespace")
		case "name":
			bad = strInto(t, m.Val, &d.Name, field+".name")
		case "facets":
			d.Facets, bad = facetsFrom(t, m.Val, field+".facets")
			d.FacetsTree = treeOf(t, m.Val)
		case "inputFacets":
			d.InputFacets, bad = facetsFrom(t, m.Val, field+".inputFacets")
		case "outputFacets":
			d.OutputFacets, bad = facetsFrom(t, m.Val, field+".outputFacets")
			d.OutputFacetsTree = treeOf(t, m.Val)
		}
		if bad != "" {
			return bad
		}
	}
	return ""
}

// canonicalBufs recycles the canonical-JSON buffers of treeID.
var canonicalBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// treeID is olevent.DocumentID of the tree: the same canonical bytes, so the same id; "" when a number is out of
// range (as DocumentID).
func treeID(t *jsontree.Doc) string {
	b := canonicalBufs.Get().(*bytes.Buffer)
	defer canonicalBufs.Put(b)
	b.Reset()
	var keys []jsontree.Member
	if !writeCanonicalNode(b, t, t.Root(), &keys) {
		return ""
	}
	return olevent.CanonicalID(b.Bytes())
}

// writeCanonicalNode writes node i as olevent's canonical form does; scratch holds the sorted members of the
// objects being written.
func writeCanonicalNode(b *bytes.Buffer, t *jsontree.Doc, i int32, scratch *[]jsontree.Member) bool {
	n := t.Node(i)
	switch n.Kind {
	case jsontree.Object:
		base := len(*scratch)
		*scratch = append(*scratch, t.Members(i)...)
		slices.SortFunc((*scratch)[base:], func(a, b jsontree.Member) int { return strings.Compare(a.Key, b.Key) })
		b.WriteByte('{')
		for k := base; k < len(*scratch); k++ {
			if k > base {
				b.WriteByte(',')
			}
			m := (*scratch)[k]
			olevent.WriteCanonicalString(b, m.Key)
			b.WriteByte(':')
			if !writeCanonicalNode(b, t, m.Val, scratch) {
				return false
			}
		}
		b.WriteByte('}')
		*scratch = (*scratch)[:base]
	case jsontree.Array:
		b.WriteByte('[')
		for k, e := range t.Elems(i) {
			if k > 0 {
				b.WriteByte(',')
			}
			if !writeCanonicalNode(b, t, e, scratch) {
				return false
			}
		}
		b.WriteByte(']')
	case jsontree.String:
		olevent.WriteCanonicalString(b, n.Str)
	case jsontree.Number:
		return olevent.WriteCanonicalNumber(b, n.Str) == nil
	case jsontree.True:
		b.WriteString("true")
	case jsontree.False:
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
	return true
}
