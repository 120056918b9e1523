package facets

import (
	"encoding/json"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// Iceberg metadata tables (ADR 0025, issue 14 item 2). The OpenLineage Spark integration reports a read of
// `ice.db.orders.snapshots` as a dataset named by the base table's location, carrying the metadata table's schema,
// the base table's current snapshot as its version, and one symlink naming the metadata table
// (`db.orders.snapshots`). Taken as sent, the metadata table's columns would become fields of the base table and
// its catalog name an alias of it. A metadata table is its own dataset: the decoder names it by that symlink, which
// is the producer's own name for it, and rewrites column-lineage references to it accordingly.

// icebergMetadataTables are Iceberg's metadata table names (MetadataTableType in Iceberg 1.x), lower case. Branch and
// tag references (`branch_x`, `tag_x`) are not metadata tables: they name the table's own data.
var icebergMetadataTables = map[string]bool{
	"entries": true, "files": true, "data_files": true, "delete_files": true, "history": true,
	"metadata_log_entries": true, "snapshots": true, "refs": true, "manifests": true, "partitions": true,
	"all_data_files": true, "all_delete_files": true, "all_files": true, "all_manifests": true, "all_entries": true,
	"position_deletes": true,
}

// minMetadataSymlinkParts: a metadata table's catalog name is namespace.table.metatable. A two-part name
// (`db.history`) is an ordinary table that happens to be called history.
const minMetadataSymlinkParts = 3

// ResolveMetadataTables renames every dataset of ev that is an Iceberg metadata table (see metadataTableOf) and
// points the column lineage that named it by the base table's identity at it.
func ResolveMetadataTables(ev *olevent.Event) {
	renamed := map[olevent.Identifier][]*olevent.Dataset{} // base identity (Type "") -> metadata tables reported under it
	for _, list := range [][]olevent.Dataset{ev.Inputs, ev.Outputs} {
		for i := range list {
			if base, ok := renameMetadataTable(&list[i]); ok {
				renamed[base] = append(renamed[base], &list[i])
			}
		}
	}
	if ev.Dataset != nil {
		if base, ok := renameMetadataTable(ev.Dataset); ok {
			renamed[base] = append(renamed[base], ev.Dataset)
		}
	}
	if len(renamed) == 0 {
		return
	}
	plain := map[olevent.Identifier]*olevent.Dataset{} // datasets still named by a base identity: the table's own data read too
	for _, list := range [][]olevent.Dataset{ev.Inputs, ev.Outputs} {
		for i := range list {
			id := olevent.Identifier{Namespace: list[i].Namespace, Name: list[i].Name}
			if _, ok := renamed[id]; ok {
				plain[id] = &list[i]
			}
		}
	}
	for _, list := range [][]olevent.Dataset{ev.Inputs, ev.Outputs, datasetList(ev.Dataset)} {
		for i := range list {
			if cl := list[i].ColumnLineage; cl != nil {
				for k := range cl.Fields {
					retarget(cl.Fields[k], renamed, plain)
				}
				retarget(cl.Dataset, renamed, plain)
			}
		}
	}
}

func datasetList(d *olevent.Dataset) []olevent.Dataset {
	if d == nil {
		return nil
	}
	return []olevent.Dataset{*d} // column lineage is a pointer: rewriting the copy's rewrites the event's
}

// renameMetadataTable gives d the metadata table's own identity when it is one, removes that symlink, and returns
// the base identity it was reported under.
func renameMetadataTable(d *olevent.Dataset) (olevent.Identifier, bool) {
	i, ok := metadataTableOf(d)
	if !ok {
		return olevent.Identifier{}, false
	}
	base := olevent.Identifier{Namespace: d.Namespace, Name: d.Name}
	sym := d.Symlinks[i]
	d.Namespace, d.Name = sym.Namespace, sym.Name
	d.Symlinks = append(d.Symlinks[:i:i], d.Symlinks[i+1:]...)
	d.MetadataTable = &olevent.MetadataTable{Base: base, Symlink: i}
	return base, true
}

// metadataTableOf returns the index of the symlink naming d as an Iceberg metadata table: d is an Iceberg dataset
// (catalog.framework or storage.storageLayer "iceberg"), the symlink's name is namespace.table.<metadata table>,
// and d's own name does not end in that metadata table's name (an ordinary table called `history` has a location
// ending in /history; a metadata table is reported under its base table's location).
func metadataTableOf(d *olevent.Dataset) (int, bool) {
	if len(d.Symlinks) == 0 || !isIceberg(d.Facets) {
		return 0, false
	}
	for i, s := range d.Symlinks {
		parts := strings.Split(s.Name, ".")
		meta := strings.ToLower(parts[len(parts)-1])
		if len(parts) < minMetadataSymlinkParts || !icebergMetadataTables[meta] {
			continue
		}
		last := strings.ToLower(d.Name[strings.LastIndexAny(d.Name, "/.")+1:])
		if last != meta {
			return i, true
		}
	}
	return 0, false
}

// isIceberg reads the catalog and storage facets leniently: a malformed one simply does not say Iceberg.
func isIceberg(facets map[string]json.RawMessage) bool {
	var c struct {
		Framework    string `json:"framework"`
		StorageLayer string `json:"storageLayer"`
	}
	for _, key := range []string{"catalog", "storage"} {
		c.Framework, c.StorageLayer = "", ""
		if raw, ok := facets[key]; ok && json.Unmarshal(raw, &c) == nil &&
			(strings.EqualFold(c.Framework, "iceberg") || strings.EqualFold(c.StorageLayer, "iceberg")) {
			return true
		}
	}
	return false
}

// retarget points column-lineage inputs that name a base identity at the metadata table they came from: when the
// event reports no read of the base table itself, every reference is the metadata table's; otherwise a field goes
// to the metadata table whose schema has it and the base table's schema does not.
func retarget(ins []olevent.InputField, renamed map[olevent.Identifier][]*olevent.Dataset, plain map[olevent.Identifier]*olevent.Dataset) {
	for j := range ins {
		id := olevent.Identifier{Namespace: ins[j].Namespace, Name: ins[j].Name}
		metas := renamed[id]
		if len(metas) == 0 {
			continue
		}
		target := metas[0]
		if base := plain[id]; base != nil {
			target = nil
			if ins[j].Field != "" && !hasField(base, ins[j].Field) {
				for _, m := range metas {
					if hasField(m, ins[j].Field) {
						target = m
						break
					}
				}
			}
		} else if ins[j].Field != "" {
			for _, m := range metas {
				if hasField(m, ins[j].Field) {
					target = m
					break
				}
			}
		}
		if target != nil {
			ins[j].Namespace, ins[j].Name = target.Namespace, target.Name
		}
	}
}

func hasField(d *olevent.Dataset, path string) bool {
	for _, f := range d.Schema {
		if f.Path == path {
			return true
		}
	}
	return false
}

// IsMetadataTableName reports whether a dotted catalog name (`db.orders.snapshots`) has the shape the decoder
// gives an Iceberg metadata table: at least namespace.table.metatable, the last part a metadata table's name. A
// real table of a nested namespace can have that name too (table `snapshots` of namespace `db.orders`); the
// catalog sync names such a table by its location instead (ADR 0087).
func IsMetadataTableName(dotted string) bool {
	parts := strings.Split(dotted, ".")
	return len(parts) >= minMetadataSymlinkParts && icebergMetadataTables[strings.ToLower(parts[len(parts)-1])]
}
