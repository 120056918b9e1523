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
}

type wireIcebergSnap struct {
	ID             string            `json:"id"`
	Parent         string            `json:"parent"`
	TimestampMs    int64             `json:"timestampMs"`
	SequenceNumber int64             `json:"sequenceNumber"`
	Operation      string            `json:"operation"`
	Summary        map[string]string `json:"summary"`
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
	}
	return nil
}

// apply sets the dataset's Iceberg identity and gives each schema field the id the catalog gave it.
func (f *wireIceberg) apply(d *olevent.Dataset) {
	t := &olevent.IcebergTable{Catalog: f.Catalog, TableUUID: f.TableUUID, MetadataLocation: f.MetadataLocation}
	if s := f.Snapshot; s != nil {
		t.Snapshot = &olevent.IcebergSnapshot{ID: s.ID, Parent: s.Parent, TimestampMs: s.TimestampMs,
			SequenceNumber: s.SequenceNumber, Operation: s.Operation, Summary: s.Summary}
	}
	d.Iceberg = t
	for i := range d.Schema {
		if id, ok := f.FieldIDs[d.Schema[i].Path]; ok {
			d.Schema[i].FieldID = strconv.FormatInt(id, 10)
		}
	}
}
