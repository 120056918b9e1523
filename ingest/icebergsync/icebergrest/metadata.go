package icebergrest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// LoadTableResult is loadTable's answer (the spec's LoadTableResult), the part the sync reads.
type LoadTableResult struct {
	MetadataLocation string            `json:"metadata-location"`
	Metadata         TableMetadata     `json:"metadata"`
	Config           map[string]string `json:"config,omitempty"`
}

// TableMetadata is the table's metadata file as the catalog serves it (Iceberg table spec v1-v3), the fields
// the sync reads: identity, schemas with field ids, snapshots, refs and the logs.
type TableMetadata struct {
	FormatVersion   int      `json:"format-version"`
	TableUUID       string   `json:"table-uuid"`
	Location        string   `json:"location"`
	LastUpdatedMs   int64    `json:"last-updated-ms"`
	LastColumnID    int      `json:"last-column-id"`
	CurrentSchemaID int      `json:"current-schema-id"`
	Schemas         []Schema `json:"schemas"`
	// CurrentSnapshotID is nil for a table without snapshots (format v1 writers send -1 for that).
	CurrentSnapshotID *SnapshotID            `json:"current-snapshot-id,omitempty"`
	Snapshots         []Snapshot             `json:"snapshots,omitempty"`
	SnapshotLog       []SnapshotLogEntry     `json:"snapshot-log,omitempty"`
	MetadataLog       []MetadataLogEntry     `json:"metadata-log,omitempty"`
	Refs              map[string]SnapshotRef `json:"refs,omitempty"`
	Properties        map[string]string      `json:"properties,omitempty"`
}

// CurrentSchema is the schema with CurrentSchemaID (nil when the metadata has none).
func (m *TableMetadata) CurrentSchema() *Schema {
	for i := range m.Schemas {
		if m.Schemas[i].SchemaID == m.CurrentSchemaID {
			return &m.Schemas[i]
		}
	}
	return nil
}

// Current is the current snapshot's id ("" for none).
func (m *TableMetadata) Current() string {
	if m.CurrentSnapshotID == nil || *m.CurrentSnapshotID == "-1" {
		return ""
	}
	return string(*m.CurrentSnapshotID)
}

// SnapshotID is a snapshot id as its exact decimal digits. Ids are 64-bit; kept as text they never pass through
// a float (Spark's commit report sends them as lossy JSON doubles; OpenLineage's datasetVersion is a string).
type SnapshotID string

// UnmarshalJSON takes a JSON integer (or a string of one) without going through float64.
func (s *SnapshotID) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
		return fmt.Errorf("snapshot id %s: not a 64-bit integer", b)
	}
	*s = SnapshotID(b)
	return nil
}

// Snapshot is one commit's snapshot.
type Snapshot struct {
	SnapshotID       SnapshotID  `json:"snapshot-id"`
	ParentSnapshotID *SnapshotID `json:"parent-snapshot-id,omitempty"`
	SequenceNumber   int64       `json:"sequence-number"`
	TimestampMs      int64       `json:"timestamp-ms"`
	ManifestList     string      `json:"manifest-list"`
	SchemaID         *int        `json:"schema-id,omitempty"`
	// Summary holds "operation" (append, replace, overwrite, delete) and the engine's counters
	// (added-records, total-records, engine-name, ...).
	Summary map[string]string `json:"summary"`
}

// Operation is the summary's operation ("" when the writer sent none).
func (s Snapshot) Operation() string { return s.Summary["operation"] }

// SnapshotRef is a branch or tag (refs; "main" is the current branch).
type SnapshotRef struct {
	Type               string     `json:"type"` // branch | tag
	SnapshotID         SnapshotID `json:"snapshot-id"`
	MaxRefAgeMs        *int64     `json:"max-ref-age-ms,omitempty"`
	MaxSnapshotAgeMs   *int64     `json:"max-snapshot-age-ms,omitempty"`
	MinSnapshotsToKeep *int       `json:"min-snapshots-to-keep,omitempty"`
}

// SnapshotLogEntry is one change of the current snapshot.
type SnapshotLogEntry struct {
	SnapshotID  SnapshotID `json:"snapshot-id"`
	TimestampMs int64      `json:"timestamp-ms"`
}

// MetadataLogEntry is one earlier metadata file.
type MetadataLogEntry struct {
	MetadataFile string `json:"metadata-file"`
	TimestampMs  int64  `json:"timestamp-ms"`
}

// Schema is one schema version (a struct type with its id).
type Schema struct {
	SchemaID           int     `json:"schema-id"`
	IdentifierFieldIDs []int   `json:"identifier-field-ids,omitempty"`
	Fields             []Field `json:"fields"`
}

// Field is a struct field: its id is its identity (a rename keeps it, a re-created column gets a new one).
type Field struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Type     Type   `json:"type"`
	Doc      string `json:"doc,omitempty"`
}

// Type is a field's type: a primitive ("long", "decimal(10,2)", "timestamptz") or a struct, list or map with
// the ids of its nested fields.
type Type struct {
	Primitive string
	Struct    []Field   // type "struct"
	List      *ListType // type "list"
	Map       *MapType  // type "map"
}

// ListType is a list's element with its field id.
type ListType struct {
	ElementID       int  `json:"element-id"`
	Element         Type `json:"element"`
	ElementRequired bool `json:"element-required"`
}

// MapType is a map's key and value with their field ids.
type MapType struct {
	KeyID         int  `json:"key-id"`
	Key           Type `json:"key"`
	ValueID       int  `json:"value-id"`
	Value         Type `json:"value"`
	ValueRequired bool `json:"value-required"`
}

// UnmarshalJSON reads the spec's Type: a JSON string, or an object told apart by "type".
func (t *Type) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &t.Primitive)
	}
	var head struct {
		Type   string  `json:"type"`
		Fields []Field `json:"fields"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	switch head.Type {
	case "struct":
		t.Struct = head.Fields
		return nil
	case "list":
		t.List = &ListType{}
		return json.Unmarshal(b, t.List)
	case "map":
		t.Map = &MapType{}
		return json.Unmarshal(b, t.Map)
	}
	return fmt.Errorf("iceberg type %q: not a primitive, struct, list or map", head.Type)
}

// String is the type as Iceberg writes it, nested types by kind ("struct", "list<long>", "map<string,long>").
func (t Type) String() string {
	switch {
	case t.Struct != nil:
		return "struct"
	case t.List != nil:
		return "list<" + t.List.Element.String() + ">"
	case t.Map != nil:
		return "map<" + t.Map.Key.String() + "," + t.Map.Value.String() + ">"
	}
	return t.Primitive
}

// FieldPath is one field of a schema, nested ones included, by id: Path joins struct levels with "." (the
// canonical field path of Headwater's fields); a list's element and a map's key and value are "element", "key"
// and "value" levels.
type FieldPath struct {
	ID       int
	Path     string
	Type     string
	Required bool
}

// Flatten lists every field of the schema, depth first in schema order.
func (s *Schema) Flatten() []FieldPath {
	var out []FieldPath
	flattenFields("", s.Fields, &out)
	return out
}

func flattenFields(prefix string, fields []Field, out *[]FieldPath) {
	for _, f := range fields {
		p := joinPath(prefix, f.Name)
		*out = append(*out, FieldPath{ID: f.ID, Path: p, Type: f.Type.String(), Required: f.Required})
		flattenType(p, f.Type, out)
	}
}

func flattenType(p string, t Type, out *[]FieldPath) {
	switch {
	case t.Struct != nil:
		flattenFields(p, t.Struct, out)
	case t.List != nil:
		e := joinPath(p, "element")
		*out = append(*out, FieldPath{ID: t.List.ElementID, Path: e, Type: t.List.Element.String(), Required: t.List.ElementRequired})
		flattenType(e, t.List.Element, out)
	case t.Map != nil:
		k, v := joinPath(p, "key"), joinPath(p, "value")
		*out = append(*out, FieldPath{ID: t.Map.KeyID, Path: k, Type: t.Map.Key.String(), Required: true})
		flattenType(k, t.Map.Key, out)
		*out = append(*out, FieldPath{ID: t.Map.ValueID, Path: v, Type: t.Map.Value.String(), Required: t.Map.ValueRequired})
		flattenType(v, t.Map.Value, out)
	}
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
