package project

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/ingest/fold"
	"github.com/headwater-data/headwater/ingest/icebergsync"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// Projection version 8 (ADR 0084) against the real Neo4j: a time-travel read that reports the table's current
// snapshot (102) as its version and names the scanned one (101) only in its scan report, as a double (1.01E2, as
// the Spark integration writes it): the READ names 101, keeps 102 as the reported version, and its column
// references resolve through 101's schema (amount is the dropped field 3). The run before the sync that records
// the snapshots, between the syncs, or delivered twice gives the same graph. A scan report no recorded snapshot
// matches keeps the reported version and says so.
func TestScenarioATimeTravelReadNamesTheScannedSnapshot(t *testing.T) {
	s := newScen(t)
	cat := icebergsync.Catalog{Name: s.ns + "-lake", Namespace: s.ns + "-http://cat:8181"}
	sync := icebergSyncEvents(s, cat)
	runOf := func(scan string) []olevent.Event {
		in := olevent.Dataset{Namespace: cat.Namespace, Name: "db.t", Version: "102", ScanSnapshot: scan}
		out := s.colOut("report", nil)
		out.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{
			"amount": {{Namespace: cat.Namespace, Name: "db.t", Field: "amount", Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "IDENTITY"}}}},
		}}
		start := in
		start.ScanSnapshot = "" // Spark sends the scan report once the scan is done: not on the START
		return []olevent.Event{
			s.runEv("rs", olevent.TypeStart, 50, "report", "r1", []olevent.Dataset{start}, []olevent.Dataset{out}),
			s.runEv("rc", olevent.TypeComplete, 55, "report", "r1", []olevent.Dataset{in}, []olevent.Dataset{out}),
		}
	}
	state := func() string {
		var b strings.Builder
		for _, r := range s.query(`MATCH (:Run)-[x:READ]->(:Dataset {namespace: $ns, name: 'db.t'})
			RETURN x.datasetVersion AS v, x.scanSnapshotId AS scan, x.scanMatch AS m, x.reportedVersion AS rv`, map[string]any{"ns": cat.Namespace}) {
			fmt.Fprintf(&b, "read %v scan=%v %v reported=%v\n", r["v"], r["scan"], r["m"], r["rv"])
		}
		for _, r := range s.query(`MATCH (:Dataset {namespace: $ns, name: 'db.t'})-[:HAS_FIELD]->(f:Field)-[:COLUMN_FEEDS]->(o:Field)
			RETURN f.fieldId AS id, o.path AS out ORDER BY out`, map[string]any{"ns": cat.Namespace}) {
			fmt.Fprintf(&b, "field %v -> %v\n", r["id"], r["out"])
		}
		return b.String()
	}
	wipe := func() {
		s.wipe()
		s.query(`MATCH (n:DatasetName {namespace: $u}) DETACH DELETE n`, map[string]any{"u": cat.UUIDNamespace()})
	}

	run := runOf("1.01E2")
	s.apply(sync...)
	s.apply(run...)
	want, wantDump := state(), s.dump()
	if want != "read 101 scan=1.01E2 "+fold.ScanMatched+" reported=102\nfield 3 -> amount\n" {
		t.Fatalf("sync then run:\n%swant the READ on 101 (reported 102) and amount from field 3 (dropped)", want)
	}
	for _, o := range []struct {
		name  string
		apply func()
	}{
		{"run before the sync", func() { s.apply(run...); s.apply(sync...) }},
		{"run between the syncs", func() { s.apply(sync[:2]...); s.apply(run...); s.apply(sync[2:]...) }},
		{"snapshots last", func() { s.apply(sync[0], sync[2]); s.apply(run...); s.apply(sync[1], sync[3]) }},
		{"delivered twice", func() { s.apply(run...); s.apply(sync...); s.apply(run...); s.apply(sync[1]) }},
		{"start, then complete", func() { s.apply(sync...); s.apply(run[0]); s.apply(run[1]) }},
	} {
		wipe()
		o.apply()
		if got := state(); got != want {
			t.Fatalf("%s:\n%swant\n%s", o.name, got, want)
		}
		if got := s.dump(); got != wantDump {
			t.Fatalf("%s: graph differs:\n%s", o.name, diffLines(wantDump, got))
		}
	}

	// A scan report no recorded snapshot rounds to: the reported version, and the reason on the READ.
	wipe()
	s.apply(sync...)
	s.apply(runOf("9.99E2")...)
	if got := state(); got != "read 102 scan=9.99E2 "+fold.ScanUnmatched+" reported=<nil>\nfield 6 -> amount\n" {
		t.Fatalf("unmatched scan report:\n%swant the reported 102, UNMATCHED, amount from field 6", got)
	}
}
