package project

import (
	"reflect"
	"strings"
)

// A decoded event's strings and raw JSON values are slices of the event's own bytes (ingest/olevent/jsontree,
// ADR 0037): one facet value or field name kept from an event keeps the whole event in memory. The dataset fold
// state keeps what it folds for minutes, for thousands of datasets (ADR 0036), so it keeps only copies: on a warm
// world the states otherwise pinned a few whole events each, and the heap near GOMEMLIMIT made the collector run
// back to back (docs/adr/0040-ingest-cpu-bisect.md).

// own replaces the change's strings and raw values with copies that share no memory with the events it was
// gathered from.
func (c *dsChange) own() {
	c.obs = ownedValue(c.obs)
	c.meta = ownedValue(c.meta)
	c.facets = ownedValue(c.facets)
	c.versions = ownedValue(c.versions)
	c.tags = ownedValue(c.tags)
	c.blocks = ownedValue(c.blocks)
	c.ice = ownedValue(c.ice)
}

// ownedValue is ownedCopy of a typed value.
func ownedValue[T any](v T) T { return ownedCopy(reflect.ValueOf(v)).Interface().(T) }

// ownedCopy is a deep copy of v in which every string and byte slice is a fresh copy. Unexported struct fields
// are copied as they are (the types it copies have none that hold event data).
func ownedCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		return reflect.ValueOf(strings.Clone(v.String())).Convert(v.Type())
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return reflect.ValueOf(append([]byte(nil), v.Bytes()...)).Convert(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(ownedCopy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(ownedCopy(it.Key()), ownedCopy(it.Value()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(ownedCopy(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(ownedCopy(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(ownedCopy(v.Field(i)))
			}
		}
		return out
	default:
		return v
	}
}
