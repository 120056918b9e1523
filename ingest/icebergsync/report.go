package icebergsync

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// WriteReport prints what a scan saw, the way `headwater catalog sync --dry-run` shows it: per table its
// identity (uuid), metadata location, current schema by field id, snapshots with parent, time, operation and
// record counts, refs and the metadata log's length; then one summary line. It writes nothing anywhere else.
func WriteReport(w io.Writer, catalog string, r ScanResult) error {
	p := &printer{w: w}
	for _, t := range r.Tables {
		p.table(t)
	}
	for _, v := range r.Vanished {
		p.f("table %s: listed, then gone before it was loaded (dropped or renamed during the scan)\n", v)
	}
	unchanged := 0
	for _, t := range r.Tables {
		if t.Unchanged {
			unchanged++
		}
	}
	p.f("catalog %s: %d namespaces, %d tables (%d unchanged), %d vanished during the scan; dry run: nothing written\n",
		catalog, len(r.Namespaces), len(r.Tables), unchanged, len(r.Vanished))
	return p.err
}

// printer keeps the first write error so the report reads as a list of lines.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) table(t TableState) {
	if t.Result == nil {
		p.f("table %s: unchanged (HTTP 304 to ETag %s)\n", t.Ident, t.ETag)
		return
	}
	m := &t.Result.Metadata
	state := "loaded"
	if t.Unchanged {
		state = "unchanged (same metadata location)"
	}
	p.f("table %s: %s\n  uuid %s, format v%d, metadata %s\n  location %s, updated %s\n", t.Ident, state,
		m.TableUUID, m.FormatVersion, t.Result.MetadataLocation, m.Location, millis(m.LastUpdatedMs))
	if s := m.CurrentSchema(); s != nil {
		p.f("  schema %d (%d schemas):\n", s.SchemaID, len(m.Schemas))
		for _, f := range s.Flatten() {
			req := ""
			if f.Required {
				req = " required"
			}
			p.f("    field %d %s %s%s\n", f.ID, f.Path, f.Type, req)
		}
	}
	p.f("  current snapshot %q, %d snapshots:\n", m.Current(), len(m.Snapshots))
	for _, s := range m.Snapshots {
		parent := "-"
		if s.ParentSnapshotID != nil {
			parent = string(*s.ParentSnapshotID)
		}
		p.f("    snapshot %s parent %s at %s %s added-records=%s total-records=%s\n", s.SnapshotID, parent,
			millis(s.TimestampMs), s.Operation(), s.Summary["added-records"], s.Summary["total-records"])
	}
	for _, name := range slices.Sorted(maps.Keys(m.Refs)) {
		ref := m.Refs[name]
		p.f("  ref %s: %s at %s\n", name, ref.Type, ref.SnapshotID)
	}
	p.f("  metadata log: %d earlier metadata files; owner %q\n", len(m.MetadataLog), m.Properties["owner"])
}

func millis(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
