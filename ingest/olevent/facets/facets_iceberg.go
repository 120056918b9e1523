package facets

import (
	"strconv"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// wireIceberg is Headwater's own headwater_iceberg dataset facet, which the Iceberg catalog sync sends on its
// DatasetEvents (ADR 0041): the table's catalog identity, the field id of every schema path, and, on a snapshot's
// event, the snapshot.
type wireIceberg struct {
	Catalog          string            `json:"catalog"`
	TableUUID        string            `json:"tableUuid"`
	MetadataLocation string            `json:"metadataLocation"`
	FieldIDs         map[string]int64  `json:"fieldIds"`
	Snapshot         *wireIcebergSnap  `json:"snapshot"`
	Refs             map[string]string `json:"refs"`
	// Schemas are the table's schemas the sync had not recorded yet: schema id -> path -> field id (ADR 0065).
	Schemas map[string]map[string]int64 `json:"schemas"`
}

// MaxIcebergSchemas bounds the schemas one headwater_iceberg facet may carry (a table's metadata keeps every
// schema it ever had; a few hundred is already unusual).
const MaxIcebergSchemas = 10_000

type wireIcebergSnap struct {
	ID             string            `json:"id"`
	Parent         string            `json:"parent"`
	TimestampMs    int64             `json:"timestampMs"`
	SequenceNumber int64             `json:"sequenceNumber"`
	Operation      string            `json:"operation"`
	Summary        map[string]string `json:"summary"`
	SchemaID       *int64            `json:"schemaId"`
}

func checkIceberg(f *wireIceberg) *problem {
	if p := firstProblem(need("", "catalog", f.Catalog), needUUID("tableUuid", f.TableUUID)); p != nil {
		return p
	}
	if s := f.Snapshot; s != nil {
		if _, err := strconv.ParseInt(s.ID, 10, 64); err != nil {
			return bad("snapshot.id", olevent.RuleType, "snapshot.id must be a 64-bit integer as a decimal string, got %q", Truncate(s.ID))
		}
		if _, err := strconv.ParseInt(s.Parent, 10, 64); s.Parent != "" && err != nil {
			return bad("snapshot.parent", olevent.RuleType, "snapshot.parent must be a 64-bit integer as a decimal string, got %q", Truncate(s.Parent))
		}
		if s.SchemaID != nil && *s.SchemaID < 0 {
			return bad("snapshot.schemaId", olevent.RuleType, "snapshot.schemaId must be a non-negative integer, got %d", *s.SchemaID)
		}
	}
	return checkIcebergSchemas(f.Schemas)
}

// checkIcebergSchemas checks the schemas' ids (non-negative integers as decimal text, at most MaxIcebergSchemas)
// and their field ids (positive integers, as Iceberg assigns them).
func checkIcebergSchemas(schemas map[string]map[string]int64) *problem {
	if len(schemas) > MaxIcebergSchemas {
		return bad("schemas", olevent.RuleSchema, "schemas holds %d schemas, more than %d (rule: MaxIcebergSchemas)", len(schemas), MaxIcebergSchemas)
	}
	for id, paths := range schemas {
		if n, err := strconv.ParseInt(id, 10, 32); err != nil || n < 0 || strconv.FormatInt(n, 10) != id {
			return bad("schemas", olevent.RuleType, "schemas keys must be schema ids (non-negative integers as decimal text), got %q", Truncate(id))
		}
		for p, fid := range paths {
			if fid <= 0 || p == "" {
				return bad("schemas."+id, olevent.RuleType, "schemas.%s maps each non-empty path to a positive field id, got %q: %d", id, Truncate(p), fid)
			}
		}
	}
	return nil
}

// apply sets the dataset's Iceberg identity and gives each schema field the id the catalog gave it.
func (f *wireIceberg) apply(d *olevent.Dataset) {
	t := &olevent.IcebergTable{Catalog: f.Catalog, TableUUID: f.TableUUID, MetadataLocation: f.MetadataLocation}
	if s := f.Snapshot; s != nil {
		t.Snapshot = &olevent.IcebergSnapshot{ID: s.ID, Parent: s.Parent, TimestampMs: s.TimestampMs,
			SequenceNumber: s.SequenceNumber, Operation: s.Operation, Summary: s.Summary}
		if s.SchemaID != nil {
			t.Snapshot.SchemaID = strconv.FormatInt(*s.SchemaID, 10)
		}
	}
	if len(f.Schemas) > 0 {
		t.Schemas = make(map[string]map[string]string, len(f.Schemas))
		for id, paths := range f.Schemas {
			m := make(map[string]string, len(paths))
			for p, fid := range paths {
				m[p] = strconv.FormatInt(fid, 10)
			}
			t.Schemas[id] = m
		}
	}
	d.Iceberg = t
	for i := range d.Schema {
		if id, ok := f.FieldIDs[d.Schema[i].Path]; ok {
			d.Schema[i].FieldID = strconv.FormatInt(id, 10)
		}
	}
}
