package icebergsync

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/facets"
)

// The sync's names and limits (ADR 0041).
const (
	// UUIDScheme is the scheme of the namespace a catalog's table uuids are identifiers in: a synced table carries
	// the symlink identifier {namespace: "iceberg://<catalog name>", name: <table-uuid>}, its key in Headwater.
	UUIDScheme = "iceberg://"
	// Producer is the producer URI of the sync's events.
	Producer = "https://github.com/headwater-data/headwater/ingest/icebergsync"
	// PublishBatch is how many events one gateway batch request carries (the gateway's default limit is 1,000).
	PublishBatch = 500
	// OldestEventAge bounds how far back a sync's event may be dated: a snapshot older than this is recorded at
	// now-OldestEventAge (the gateway refuses events older than its horizon, 400 days by default).
	OldestEventAge = 399 * 24 * time.Hour
)

const (
	datasetEventSchema = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/DatasetEvent"
	facetSchemaURL     = "https://openlineage.io/spec/facets/1-0-0/Facet.json"
	icebergFacetURL    = "https://github.com/headwater-data/headwater/docs/iceberg.md#headwater_iceberg"
	uuidIdentifierType = "TABLE_UUID"
	ownershipFacetURL  = "https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json#/$defs/OwnershipDatasetFacet"
)

// Catalog is one catalog as Headwater names it: Name in configuration, and the OpenLineage namespace its tables
// are named in (the catalog's URI, as pyiceberg, Trino and Spark's symlinks name them), canonical.
type Catalog struct {
	Name      string
	Namespace string
}

// UUIDNamespace is the namespace of the catalog's table-uuid identifiers.
func (c Catalog) UUIDNamespace() string { return UUIDScheme + strings.ToLower(c.Name) }

// Known is what the graph holds of one synced table (by its uuid): its current name, the metadata file the last
// sync read, whether it is dropped, and the versions (snapshot ids) recorded.
type Known struct {
	UUID, Name       string
	MetadataLocation string
	Owner            string // the owner the sync last recorded ("" when none)
	Dropped          bool
	Versions         map[string]bool
	// VersionSchemas are the recorded versions that carry a schema id, and Schemas the schema ids recorded
	// (projection version 7, ADR 0065): a table synced by version 6 has neither, so its next sync sends them.
	VersionSchemas map[string]bool
	Schemas        map[string]bool
	// CatalogTags are the tags in force now whose source is the sync's (TagSource), rendered and sorted as
	// Dataset.tags renders them (ADR 0075).
	CatalogTags []string
	// OtherTags are the tags in force now from every other source (a producer's tags facet, the governance
	// mutations), sorted by name: the sync's tags facet keeps them as they are (ADR 0087).
	OtherTags []olevent.Tag
	// RefNamespace and RefName name a table the sync names by its location (its catalog name is a metadata
	// table's, ADR 0087): the node's own name, which the sync's events for it use. Empty: the events name the
	// table (cat.Namespace, Name).
	RefNamespace, RefName string
}

// ref is the name the sync's events give a known table.
func (k Known) ref(cat Catalog) (ns, name string) {
	if k.RefNamespace != "" {
		return k.RefNamespace, k.RefName
	}
	return cat.Namespace, k.Name
}

// newRef is the name the sync's events give a table the graph does not know: its catalog name in the catalog's
// namespace, except a catalog name a metadata table has too (table `snapshots` of namespace `db.orders` is
// `db.orders.snapshots`, the name the decoder gives `db.orders`'s snapshots metadata table, ADR 0064): that table is
// named by its location, as Spark names it, and never takes the metadata table's node (ADR 0087). A location the
// sync cannot name leaves the catalog name.
func newRef(cat Catalog, name, location string) (ns, n string, byLocation bool) {
	if facets.IsMetadataTableName(name) {
		if ns, n, ok := locationName(location); ok {
			return ns, n, true
		}
	}
	return cat.Namespace, name, false
}

// missingSchemas reports whether the table's metadata has a schema, or a recorded snapshot a schema id, that the
// graph lacks (a table last synced under projection version 6).
func (k Known) missingSchemas(md *icebergrest.TableMetadata) bool {
	for _, s := range md.Schemas {
		if !k.Schemas[strconv.Itoa(s.SchemaID)] {
			return true
		}
	}
	for _, s := range md.Snapshots {
		if s.SchemaID != nil && k.Versions[string(s.SnapshotID)] && !k.VersionSchemas[string(s.SnapshotID)] {
			return true
		}
	}
	return false
}

// StateReader reads what earlier syncs of a catalog left in the graph, by table uuid.
type StateReader interface {
	Known(ctx context.Context, cat Catalog) (map[string]Known, error)
}

// Publisher sends the sync's events through the gateway and returns their event ids.
type Publisher interface {
	Publish(ctx context.Context, events []json.RawMessage) ([]string, error)
}

// Options of one sync.
type Options struct {
	// Root limits the sync to a namespace and everything below it (nil: the whole catalog); tables outside it
	// are neither read nor dropped.
	Root icebergrest.Namespace
	// Now is the sync's time: renames and drops are recorded at it (time.Now when nil).
	Now func() time.Time
}

// Report counts what one sync saw and wrote.
type Report struct {
	Tables, Unchanged, New, Changed, Renamed, Dropped, Snapshots int
	// Warnings name what of the catalog was not sent and why (a table property carrying tags the sync cannot
	// read, ADR 0075); the rest of the sync went on.
	Warnings []Warning
	// EventIDs are the ids the gateway gave the events (none: the sync wrote nothing).
	EventIDs []string
}

// Sync reads what the graph holds of the catalog, scans it (all-or-nothing: a failed scan writes nothing), plans
// the events and publishes them. Unchanged tables (same metadata location, same name) give no event.
func Sync(ctx context.Context, c *icebergrest.Client, cat Catalog, state StateReader, pub Publisher, opt Options) (Report, error) {
	known, err := state.Known(ctx, cat)
	if err != nil {
		return Report{}, fmt.Errorf("iceberg sync %s: reading what earlier syncs recorded: %w", cat.Name, err)
	}
	prev := map[string]Seen{}
	for _, k := range known {
		if !k.Dropped {
			prev[k.Name] = Seen{MetadataLocation: k.MetadataLocation}
		}
	}
	scan, err := ScanUnder(ctx, c, opt.Root, prev)
	if err != nil {
		return Report{}, fmt.Errorf("iceberg sync %s: scan failed, nothing written: %w", cat.Name, err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	evs, rep := Plan(cat, scan, known, opt.Root, now())
	if len(evs) == 0 {
		return rep, nil
	}
	ids, err := pub.Publish(ctx, evs)
	rep.EventIDs = ids
	if err != nil {
		return rep, fmt.Errorf("iceberg sync %s: %w", cat.Name, err)
	}
	return rep, nil
}

// Plan turns a complete scan and the graph's record of earlier syncs into events (a pure function):
//   - a table whose uuid the graph does not know, or whose metadata location changed: its state (schema with field
//     ids, uuid identifier, metadata location) at the metadata's last-updated time, and a version event per
//     snapshot not recorded yet, at the snapshot's time;
//   - a known uuid under another name: a RENAME at now; the other events of that table name the old name (they
//     are dated before the rename, and name the same node whichever the projector applies first);
//   - a known table under root that the scan did not see: a DROP at now, unless a table vanished during the scan
//     (a partial view never drops anything).
func Plan(cat Catalog, scan ScanResult, known map[string]Known, root icebergrest.Namespace, now time.Time) ([]json.RawMessage, Report) {
	var out []json.RawMessage
	var rep Report
	byName := map[string]string{}
	for u, k := range known {
		if !k.Dropped {
			byName[k.Name] = u
		}
	}
	seen := map[string]bool{}
	oldest := now.Add(-OldestEventAge)
	for _, t := range scan.Tables {
		rep.Tables++
		name := t.Ident.String()
		if t.Result == nil { // 304: unchanged, identified by its name
			seen[byName[name]] = true
			rep.Unchanged++
			continue
		}
		md := &t.Result.Metadata
		u := strings.ToLower(md.TableUUID)
		seen[u] = true
		k, isKnown := known[u]
		eventNS, eventName, byLocation := newRef(cat, name, md.Location)
		if isKnown {
			eventNS, eventName = k.ref(cat)
			byLocation = k.RefNamespace != ""
		}
		renamed := isKnown && !k.Dropped && k.Name != name
		if renamed {
			rep.Renamed++
		}
		if renamed && !byLocation {
			out = append(out, event(now, cat.Namespace, name, map[string]any{
				"lifecycleStateChange": facet(map[string]any{"lifecycleStateChange": "RENAME",
					"previousIdentifier": map[string]any{"namespace": cat.Namespace, "name": k.Name}}),
				"symlinks":          uuidSymlink(cat, u),
				"headwater_iceberg": facet(icebergFacet(cat, u, name, t.Result.MetadataLocation, nil)),
			}))
		}
		// A table named by its location keeps that name when renamed: its state event carries the new catalog
		// name (headwater_iceberg.table), which is how the next sync knows it (ADR 0087).
		renamedByLocation := renamed && byLocation
		ref := ident{eventNS, eventName}
		owner := scan.Owner(t)
		tags, warns := catalogTags(name, md)
		rep.Warnings = append(rep.Warnings, warns...)
		tagsChanged := !sameTags(tags, k.CatalogTags, k.OtherTags)
		unchanged := isKnown && k.MetadataLocation == t.Result.MetadataLocation && !k.Dropped && !k.missingSchemas(md) && !renamedByLocation
		if unchanged && tagsChanged {
			// The table did not change, so its tags did not either: another source's tags facet replaced the
			// list after the table's last update. The sync's tags come back now, beside the others' (ADR 0087);
			// dated at the table's last update they would never be the latest.
			rep.Changed++
			fs := map[string]any{"tags": tagsFacet(tags, k.OtherTags), "symlinks": uuidSymlink(cat, u)}
			if owner != k.Owner && owner != "" {
				fs["ownership"] = ownershipFacet(owner)
			}
			out = append(out, event(now, eventNS, eventName, fs))
			continue
		}
		if unchanged {
			if owner != k.Owner && owner != "" { // the namespace's owner changed, the table did not
				out = append(out, event(now, eventNS, eventName, map[string]any{"ownership": ownershipFacet(owner),
					"symlinks": uuidSymlink(cat, u)}))
			}
			if !renamed {
				rep.Unchanged++
			}
			continue
		}
		if isKnown {
			rep.Changed++
		} else {
			rep.New++
		}
		var tagsF map[string]any
		if tagsChanged { // the full list, empty when the properties no longer carry any (ADR 0075), with every other source's tags in force (ADR 0087)
			tagsF = tagsFacet(tags, k.OtherTags)
		}
		out = append(out, tableState(cat, u, ref, name, byLocation, t.Result, owner, isKnown && k.Dropped, k.Schemas, tagsF, clamp(md.LastUpdatedMs, oldest)))
		for _, s := range md.Snapshots {
			if isKnown && k.Versions[string(s.SnapshotID)] && (s.SchemaID == nil || k.VersionSchemas[string(s.SnapshotID)]) {
				continue
			}
			rep.Snapshots++
			out = append(out, snapshotEvent(cat, u, ref, name, t.Result.MetadataLocation, s, clamp(s.TimestampMs, oldest)))
		}
	}
	if len(scan.Vanished) > 0 {
		return out, rep
	}
	var gone []string
	for u, k := range known {
		if !k.Dropped && !seen[u] && under(root, k.Name) {
			gone = append(gone, u)
		}
	}
	sort.Strings(gone)
	for _, u := range gone {
		rep.Dropped++
		ns, name := known[u].ref(cat)
		out = append(out, event(now, ns, name, map[string]any{
			"lifecycleStateChange": facet(map[string]any{"lifecycleStateChange": "DROP"}),
			"symlinks":             uuidSymlink(cat, u),
		}))
	}
	return out, rep
}

// under reports whether a table's dotted name lies in root (nil: everything).
func under(root icebergrest.Namespace, name string) bool {
	return len(root) == 0 || strings.HasPrefix(name, root.String()+".")
}

func clamp(ms int64, oldest time.Time) time.Time {
	t := time.UnixMilli(ms)
	if t.Before(oldest) {
		return oldest
	}
	return t
}

// ident is a dataset's OpenLineage name.
type ident struct{ ns, name string }

// tableState is the event of a table's current state, named ref: its schema (nested as the schema facet nests,
// with every path's field id in headwater_iceberg), its uuid identifier, its catalog name (headwater_iceberg.table),
// its owner (the table's owner property, else its namespace's: ScanResult.Owner), its tags facet (nil: none
// sent); revived is a table the graph has as dropped that the catalog lists again; byLocation is a table ref
// names by its location (ADR 0087), which then needs no location identifier.
func tableState(cat Catalog, u string, ref ident, table string, byLocation bool, r *icebergrest.LoadTableResult, owner string, revived bool,
	recorded map[string]bool, tags map[string]any, at time.Time) json.RawMessage {
	md := &r.Metadata
	ice := icebergFacet(cat, u, table, r.MetadataLocation, nil)
	links := uuidSymlink(cat, u)
	if ns, n, ok := locationName(md.Location); ok && !byLocation { // the name Spark's events give the table (ADR 0083)
		links["identifiers"] = append(links["identifiers"].([]any), map[string]any{"namespace": ns, "name": n, "type": locationIdentifierType})
	}
	facets := map[string]any{"symlinks": links}
	if s := md.CurrentSchema(); s != nil {
		ids := map[string]int{}
		for _, f := range s.Flatten() {
			ids[f.Path] = f.ID
		}
		ice["fieldIds"] = ids
		facets["schema"] = facet(map[string]any{"fields": schemaFields(s.Fields)})
	}
	// every schema the graph has not recorded, with each path's field id (ADR 0065)
	schemas := map[string]map[string]int{}
	for i := range md.Schemas {
		s := &md.Schemas[i]
		if id := strconv.Itoa(s.SchemaID); !recorded[id] {
			ids := map[string]int{}
			for _, f := range s.Flatten() {
				ids[f.Path] = f.ID
			}
			schemas[id] = ids
		}
	}
	if len(schemas) > 0 {
		ice["schemas"] = schemas
	}
	if refs := refsOf(md); len(refs) > 0 {
		ice["refs"] = refs
	}
	facets["headwater_iceberg"] = facet(ice)
	if owner != "" {
		facets["ownership"] = ownershipFacet(owner)
	}
	if tags != nil {
		facets["tags"] = tags
	}
	if revived {
		facets["lifecycleStateChange"] = facet(map[string]any{"lifecycleStateChange": "CREATE"})
	}
	return event(at, ref.ns, ref.name, facets)
}

// snapshotEvent records one snapshot as a dataset version (version.datasetVersion is the snapshot id as text).
func snapshotEvent(cat Catalog, u string, ref ident, table, metadataLocation string, s icebergrest.Snapshot, at time.Time) json.RawMessage {
	snap := map[string]any{"id": string(s.SnapshotID), "timestampMs": s.TimestampMs, "sequenceNumber": s.SequenceNumber,
		"operation": s.Operation(), "summary": orEmpty(s.Summary)}
	if s.ParentSnapshotID != nil && *s.ParentSnapshotID != "-1" {
		snap["parent"] = string(*s.ParentSnapshotID)
	}
	if s.SchemaID != nil {
		snap["schemaId"] = *s.SchemaID
	}
	return event(at, ref.ns, ref.name, map[string]any{
		"version":           facet(map[string]any{"datasetVersion": string(s.SnapshotID)}),
		"symlinks":          uuidSymlink(cat, u),
		"headwater_iceberg": facet(icebergFacet(cat, u, table, metadataLocation, snap)),
	})
}

// ownershipFacet is OpenLineage's ownership dataset facet naming the catalog's owner.
func ownershipFacet(owner string) map[string]any {
	return facet(map[string]any{"_schemaURL": ownershipFacetURL, "owners": []any{map[string]any{"name": owner, "type": "OWNER"}}})
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func refsOf(md *icebergrest.TableMetadata) map[string]string {
	out := map[string]string{}
	for n, r := range md.Refs {
		out[n] = r.Type + ":" + string(r.SnapshotID)
	}
	return out
}

// icebergFacet is the sync's headwater_iceberg facet: the catalog, the table's uuid, its catalog name (table: how
// the next sync knows a table named by its location, ADR 0087), its metadata file and, on a snapshot's event, the
// snapshot.
func icebergFacet(cat Catalog, u, table, metadataLocation string, snap map[string]any) map[string]any {
	f := map[string]any{"_schemaURL": icebergFacetURL, "catalog": cat.Name, "tableUuid": u, "table": table, "metadataLocation": metadataLocation}
	if snap != nil {
		f["snapshot"] = snap
	}
	return f
}

func uuidSymlink(cat Catalog, u string) map[string]any {
	return facet(map[string]any{"identifiers": []any{map[string]any{"namespace": cat.UUIDNamespace(), "name": u, "type": uuidIdentifierType}}})
}

// schemaFields renders Iceberg fields as the schema facet's nested fields: a list's element and a map's key and
// value are child fields named element, key and value (the paths Schema.Flatten gives).
func schemaFields(fs []icebergrest.Field) []any {
	out := make([]any, 0, len(fs))
	for _, f := range fs {
		out = append(out, schemaField(f.Name, f.Type, f.Doc))
	}
	return out
}

func schemaField(name string, t icebergrest.Type, doc string) map[string]any {
	m := map[string]any{"name": name, "type": t.String()}
	if doc != "" {
		m["description"] = doc
	}
	var kids []any
	switch {
	case t.Struct != nil:
		kids = schemaFields(t.Struct)
	case t.List != nil:
		kids = []any{schemaField("element", t.List.Element, "")}
	case t.Map != nil:
		kids = []any{schemaField("key", t.Map.Key, ""), schemaField("value", t.Map.Value, "")}
	}
	if len(kids) > 0 {
		m["fields"] = kids
	}
	return m
}

func facet(m map[string]any) map[string]any {
	m["_producer"] = Producer
	if _, ok := m["_schemaURL"]; !ok {
		m["_schemaURL"] = facetSchemaURL
	}
	return m
}

func event(t time.Time, ns, name string, facets map[string]any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{ // maps of strings, numbers and slices always encode
		"eventTime": t.UTC().Format(time.RFC3339Nano), "producer": Producer, "schemaURL": datasetEventSchema,
		"dataset": map[string]any{"namespace": ns, "name": name, "facets": facets}})
	return b
}
