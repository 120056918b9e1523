package facets

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/headwater-data/headwater/ingest/olevent/jsontree"
)

// Tree is a facet map in the decoder's parse tree (ADR 0037): Doc and the node of the facets object. The facet
// parsers read an interpreted facet from it instead of unmarshalling the facet's bytes again. The zero Tree (no
// Doc) means there is none: the facet is unmarshalled from its bytes.
type Tree struct {
	Doc  *jsontree.Doc
	Node int32
}

// facet is the node of facets[key], if the tree has it.
func (t Tree) facet(key string) (int32, bool) {
	if t.Doc == nil {
		return 0, false
	}
	return t.Doc.Get(t.Node, key)
}

// readFacet fills v (a pointer to a facet's wire struct) from node i, reading it exactly as goccy/go-json's
// Unmarshal does in the plain case: keys match field names exactly, null leaves a field zero, unknown keys are
// skipped. It returns false, with v in any state, as soon as the facet leaves the plain case (a key that matches
// a field only without regard to case, a value of another type than its field's, a field type it does not know):
// the caller then unmarshals the bytes as before, so the outcome, warning included, stays the same.
func readFacet(d *jsontree.Doc, i int32, v any) bool {
	return fill(d, i, reflect.ValueOf(v).Elem())
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func fill(d *jsontree.Doc, i int32, v reflect.Value) bool {
	k := d.Kind(i)
	if v.Type() == rawMessageType {
		v.SetBytes(d.Raw(i))
		return true
	}
	switch v.Kind() {
	case reflect.String:
		switch k {
		case jsontree.String:
			v.SetString(d.Node(i).Str)
		case jsontree.Null:
		default:
			return false
		}
	case reflect.Bool:
		switch k {
		case jsontree.True, jsontree.False:
			v.SetBool(k == jsontree.True)
		case jsontree.Null:
		default:
			return false
		}
	case reflect.Pointer:
		if k == jsontree.Null {
			v.SetZero()
			return true
		}
		p := reflect.New(v.Type().Elem())
		if !fill(d, i, p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.Slice:
		return fillSlice(d, i, v)
	case reflect.Map:
		return fillMap(d, i, v)
	case reflect.Struct:
		return fillStruct(d, i, v)
	default:
		return false
	}
	return true
}

func fillSlice(d *jsontree.Doc, i int32, v reflect.Value) bool {
	switch d.Kind(i) {
	case jsontree.Null:
		v.SetZero()
		return true
	case jsontree.Array:
	default:
		return false
	}
	es := d.Elems(i)
	s := reflect.MakeSlice(v.Type(), len(es), len(es))
	for n, e := range es {
		if d.Kind(e) != jsontree.Null && !fill(d, e, s.Index(n)) {
			return false
		}
	}
	v.Set(s)
	return true
}

func fillMap(d *jsontree.Doc, i int32, v reflect.Value) bool {
	switch d.Kind(i) {
	case jsontree.Null:
		return true
	case jsontree.Object:
	default:
		return false
	}
	if v.Type().Key().Kind() != reflect.String {
		return false
	}
	ms := d.Members(i)
	m := reflect.MakeMapWithSize(v.Type(), len(ms))
	for _, mb := range ms {
		e := reflect.New(v.Type().Elem()).Elem()
		if !fill(d, mb.Val, e) {
			return false
		}
		m.SetMapIndex(reflect.ValueOf(mb.Key).Convert(v.Type().Key()), e)
	}
	v.Set(m)
	return true
}

func fillStruct(d *jsontree.Doc, i int32, v reflect.Value) bool {
	switch d.Kind(i) {
	case jsontree.Null:
		return true
	case jsontree.Object:
	default:
		return false
	}
	fields := planOf(v.Type())
	for _, mb := range d.Members(i) {
		f, ok := fields.byName(mb.Key)
		if !ok {
			if fields.folds(mb.Key) {
				return false
			}
			continue
		}
		if !fill(d, mb.Val, v.FieldByIndex(f.index)) {
			return false
		}
	}
	return true
}

// structPlan lists a wire struct's JSON fields (embedded structs' fields promoted).
type structPlan struct{ fields []fieldPlan }

type fieldPlan struct {
	name  string
	index []int
}

func (p *structPlan) byName(key string) (fieldPlan, bool) {
	for _, f := range p.fields {
		if f.name == key {
			return f, true
		}
	}
	return fieldPlan{}, false
}

// folds says whether key names a field only without regard to case.
func (p *structPlan) folds(key string) bool {
	for _, f := range p.fields {
		if strings.EqualFold(f.name, key) {
			return true
		}
	}
	return false
}

var plans sync.Map // reflect.Type -> *structPlan

func planOf(t reflect.Type) *structPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan)
	}
	p := &structPlan{fields: fieldsOf(t, nil)}
	plans.Store(t, p)
	return p
}

func fieldsOf(t reflect.Type, prefix []int) []fieldPlan {
	var out []fieldPlan
	for n := range t.NumField() {
		f := t.Field(n)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		index := append(append([]int(nil), prefix...), n)
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, fieldsOf(f.Type, index)...)
		case !f.IsExported():
		case tag != "":
			out = append(out, fieldPlan{name: tag, index: index})
		default:
			out = append(out, fieldPlan{name: f.Name, index: index})
		}
	}
	return out
}
