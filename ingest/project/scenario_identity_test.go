package project

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// dsEv builds a DatasetEvent.
func (s *scen) dsEv(id string, sec int, d olevent.Dataset) olevent.Event {
	return olevent.Event{ID: s.ns + "-" + id, Kind: olevent.KindDataset, EventTime: s.at(sec),
		Producer: "https://example.com/catalog", SchemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json",
		Dataset: &d}
}

func TestScenarioRenameKeepsTheNodeAndItsHistory(t *testing.T) {
	s := newScen(t)
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "load", "r1", nil, []olevent.Dataset{withSchema(s.ds("a"), "id")}),
		s.runEv("c1", olevent.TypeComplete, 20, "load", "r1", nil, nil))
	renamed := s.ds("b")
	renamed.Lifecycle = &olevent.Lifecycle{State: "RENAME",
		PreviousIdentifier: &olevent.Identifier{Namespace: s.dsNS(), Name: "a"}}
	res := s.apply(s.dsEv("rename", 30, renamed))
	// Cached answers found by either name are revalidated: both names' generations are bumped with the node's.
	for _, k := range []string{s.dsKey("a"), graph.NameGenKey(graph.DatasetIdent("prod", s.dsNS(), "a")),
		graph.NameGenKey(graph.DatasetIdent("prod", s.dsNS(), "b"))} {
		if !slices.Contains(res.Touched, k) {
			t.Fatalf("rename did not touch %s: %v", k, res.Touched)
		}
	}
	s.apply(s.runEv("s2", olevent.TypeStart, 40, "load", "r2", nil, []olevent.Dataset{s.ds("b")}),
		s.runEv("c2", olevent.TypeComplete, 50, "load", "r2", nil, nil),
		s.runEv("s3", olevent.TypeStart, 60, "read-old-name", "r3", []olevent.Dataset{s.ds("a")}, nil))

	node := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.name AS name`, map[string]any{"k": s.dsKey("a")})
	if node["name"] != "b" {
		t.Fatalf("node not renamed: %v", node)
	}
	if rows := s.query(`MATCH (d:Dataset {key: $k}) RETURN d`, map[string]any{"k": s.dsKey("b")}); len(rows) != 0 {
		t.Fatal("the rename created a second node")
	}
	names := s.query(`MATCH (n:DatasetName)-[r:NAMES]->(d:Dataset {key: $k}) RETURN n.name AS n, r.kind AS kind,
		r.validFrom AS f, r.validTo AS t ORDER BY n.name`, map[string]any{"k": s.dsKey("a")})
	if len(names) != 2 || names[0]["kind"] != graph.NameRenamed || names[0]["t"] != s.ms(30) ||
		names[1]["kind"] != graph.NamePrimary || names[1]["f"] != s.ms(30) || names[1]["t"] != graph.OpenEnd {
		t.Fatalf("names %v", names)
	}
	if got := s.intervals(s.edge("out", "load", s.dsKey("a"), graph.KindObserved)); got != "[10,30)PUBLISHED [40,open)PUBLISHED" {
		t.Fatalf("history across the rename: %s", got)
	}
	if got := s.intervals(s.edge("in", "read-old-name", s.dsKey("a"), graph.KindObserved)); got != "[60,open)PENDING" {
		t.Fatalf("old name does not resolve to the renamed node: %s", got)
	}
	if f := s.one(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field {path: 'id'}) RETURN f.validTo AS t`,
		map[string]any{"k": s.dsKey("a")}); f["t"] != graph.OpenEnd {
		t.Fatalf("rename closed the schema: %v", f)
	}
}

func TestScenarioRenameOntoAnotherDatasetIsUnresolved(t *testing.T) {
	s := newScen(t)
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "load", "r1", []olevent.Dataset{s.ds("a")}, []olevent.Dataset{s.ds("b")}))
	renamed := s.ds("b")
	renamed.Lifecycle = &olevent.Lifecycle{State: "RENAME",
		PreviousIdentifier: &olevent.Identifier{Namespace: s.dsNS(), Name: "a"}}
	res := s.apply(s.dsEv("rename", 30, renamed))
	if res.Unresolved != 1 {
		t.Fatalf("result %+v", res)
	}
	u := s.one(`MATCH (u:UnresolvedIdentity {namespace: $ns, name: 'a'}) RETURN u.reason AS r, u.eventIds AS e`,
		map[string]any{"ns": s.dsNS()})
	if u["r"] != reasonRenameConflict {
		t.Fatalf("unresolved %v", u)
	}
	for _, k := range []string{"a", "b"} {
		if d := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.name AS n`, map[string]any{"k": s.dsKey(k)}); d["n"] != k {
			t.Fatalf("node %s changed: %v", k, d)
		}
	}
}

func TestScenarioSymlinksResolveToOneDataset(t *testing.T) {
	s := newScen(t)
	hiveNS := s.ns + "-hive://metastore:9083"
	tbl := s.ds("warehouse.orders")
	tbl.Symlinks = []olevent.Identifier{{Namespace: hiveNS, Name: "db.orders", Type: "TABLE"},
		{Namespace: s.ns + "-S3://Bucket/", Name: "warehouse/orders", Type: "LOCATION"}}
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "write", "r1", nil, []olevent.Dataset{tbl}))
	s.apply(s.runEv("s2", olevent.TypeStart, 20, "spark", "r2", []olevent.Dataset{{Namespace: hiveNS, Name: "db.orders"}}, nil),
		s.runEv("s3", olevent.TypeStart, 30, "copy", "r3",
			[]olevent.Dataset{{Namespace: s.ns + "-s3://bucket", Name: "warehouse/orders"}}, nil))
	for _, job := range []string{"spark", "copy"} {
		if e := s.edge("in", job, s.dsKey("warehouse.orders"), graph.KindObserved); e == nil {
			t.Fatalf("%s does not read the symlinked dataset", job)
		}
	}
	if rows := s.query(`MATCH (d:Dataset) WHERE d.namespace STARTS WITH $ns RETURN d.key`, map[string]any{"ns": s.ns}); len(rows) != 1 {
		t.Fatalf("want one dataset, got %v", rows)
	}
	names := s.query(`MATCH (n:DatasetName)-[r:NAMES {kind: 'SYMLINK'}]->(:Dataset {key: $k}) RETURN n.ident AS i`,
		map[string]any{"k": s.dsKey("warehouse.orders")})
	if len(names) != 2 {
		t.Fatalf("symlink names %v", names)
	}
}

func TestScenarioUnresolvableAndConflictingIdentifiers(t *testing.T) {
	s := newScen(t)
	s.apply(s.runEv("s0", olevent.TypeStart, 5, "other", "r0", nil, []olevent.Dataset{s.ds("taken")}))
	x := s.ds("x")
	x.Symlinks = []olevent.Identifier{{Namespace: s.dsNS(), Name: "taken"}}
	res := s.apply(s.runEv("s1", olevent.TypeStart, 10, "load", "r1",
		[]olevent.Dataset{s.ds("bad!!name"), s.ds("good")}, []olevent.Dataset{x}))
	if res.Unresolved != 2 {
		t.Fatalf("result %+v", res)
	}
	rows := s.query(`MATCH (u:UnresolvedIdentity) WHERE u.namespace = $ns RETURN u.name AS n, u.reason AS r ORDER BY n`,
		map[string]any{"ns": s.dsNS()})
	if len(rows) != 2 || rows[0]["n"] != "bad!!name" || !strings.HasPrefix(rows[0]["r"].(string), "cannot canonicalise") ||
		rows[1]["n"] != "taken" || rows[1]["r"] != reasonSymlinkConflict {
		t.Fatalf("unresolved %v", rows)
	}
	if e := s.edge("in", "load", s.dsKey("good"), graph.KindObserved); e == nil {
		t.Fatal("the resolvable input was not projected")
	}
	if e := s.edge("out", "other", s.dsKey("taken"), graph.KindObserved); e == nil {
		t.Fatal("the other dataset lost its edge")
	}
	if rows := s.query(`MATCH (:DatasetName {name: 'taken'})-[:NAMES]->(d:Dataset) WHERE d.namespace = $ns
		RETURN d.key AS k`, map[string]any{"ns": s.dsNS()}); len(rows) != 1 || rows[0]["k"] != s.dsKey("taken") {
		t.Fatalf("taken merged: %v", rows)
	}
	// the same unresolved identifier again updates the record, not a new one.
	s.apply(s.runEv("s2", olevent.TypeStart, 20, "load", "r2", []olevent.Dataset{s.ds("bad!!name")}, nil))
	u := s.one(`MATCH (u:UnresolvedIdentity {name: 'bad!!name'}) WHERE u.namespace = $ns RETURN u.lastSeenAt AS l, u.eventIds AS e`,
		map[string]any{"ns": s.dsNS()})
	if u["l"] != s.ms(20) || len(u["e"].([]any)) != 2 {
		t.Fatalf("record %v", u)
	}
}

func TestScenarioDatasetEventAndJobEvent(t *testing.T) {
	s := newScen(t)
	meta := s.ds("z")
	meta.Description = "orders mart"
	meta.Owners = []olevent.Owner{{Name: "team:finance", Type: "MAINTAINER"}}
	meta.Tags = []olevent.Tag{{Key: "pii", Value: "true"}}
	meta.Lineage = &olevent.LineageFacet{Inputs: []olevent.Identifier{{Namespace: s.dsNS(), Name: "u"}},
		Fields: map[string][]olevent.InputField{"total": {{Namespace: s.dsNS(), Name: "u", Field: "amount",
			Transformations: []olevent.Transformation{{Type: "DIRECT", Subtype: "AGGREGATION", Description: "sum"}}}}}}
	older := s.ds("z")
	older.Description = "stale description"
	s.apply(s.dsEv("meta", 20, meta), s.dsEv("older", 10, older))
	d := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.description AS desc, d.owners AS o, d.tags AS tags`,
		map[string]any{"k": s.dsKey("z")})
	if d["desc"] != "orders mart" || !strings.Contains(d["o"].(string), "team:finance") || len(d["tags"].([]any)) != 1 {
		t.Fatalf("metadata %v", d)
	}
	feeds := s.one(`MATCH (:Dataset {key: $u})-[e:DECLARED_FEEDS]->(:Dataset {key: $z}) RETURN properties(e) AS p`,
		map[string]any{"u": s.dsKey("u"), "z": s.dsKey("z")})["p"].(map[string]any)
	if got := s.intervals(feeds); got != "[20,open)PUBLISHED" || feeds["kind"] != graph.KindDeclared {
		t.Fatalf("declared feeds %s %v", got, feeds["kind"])
	}

	declaredCol := func() map[string]any {
		rows := s.query(`MATCH (a:Field {path: 'amount', datasetKey: $u})-[c:COLUMN_FEEDS {kind: 'DECLARED'}]->(b:Field {path: 'total', datasetKey: $z})
			RETURN properties(c) AS p`, map[string]any{"u": s.dsKey("u"), "z": s.dsKey("z")})
		if len(rows) != 1 {
			t.Fatalf("declared column edges: %v", rows)
		}
		return rows[0]["p"].(map[string]any)
	}
	if c := declaredCol(); s.intervals(c) != "[20,open)PUBLISHED" || c["jobKey"] != "" || fmt.Sprint(c["tSubtypes"]) != "[AGGREGATION]" {
		t.Fatalf("declared column edge %v", c)
	}
	withdraw := s.ds("z")
	withdraw.Lineage = &olevent.LineageFacet{Inputs: []olevent.Identifier{{Namespace: s.dsNS(), Name: "u"}}}
	s.apply(s.dsEv("withdraw", 25, withdraw))
	if got := s.intervals(declaredCol()); got != "[20,25)PUBLISHED" {
		t.Fatalf("withdrawn field declaration: %s", got)
	}

	jobEv := func(id string, sec int, ins ...string) olevent.Event {
		e := olevent.Event{ID: s.ns + "-" + id, Kind: olevent.KindJob, EventTime: s.at(sec), Producer: "dbt",
			Job:     &olevent.Job{Namespace: s.jobNS(), Name: "model", SQL: "select * from x"},
			Outputs: []olevent.Dataset{s.ds("z")}}
		for _, in := range ins {
			e.Inputs = append(e.Inputs, s.ds(in))
		}
		return e
	}
	s.apply(jobEv("j2", 40, "x"), jobEv("j1", 30, "x", "y"))
	s.apply(s.runEv("s1", olevent.TypeStart, 50, "model", "r1", []olevent.Dataset{s.ds("x")}, nil))
	if got := s.intervals(s.edge("in", "model", s.dsKey("y"), graph.KindDeclared)); got != "[30,40)PUBLISHED" {
		t.Fatalf("withdrawn declaration: %s", got)
	}
	if got := s.intervals(s.edge("in", "model", s.dsKey("x"), graph.KindDeclared)); got != "[30,open)PUBLISHED" {
		t.Fatalf("declared x: %s", got)
	}
	if got := s.intervals(s.edge("in", "model", s.dsKey("x"), graph.KindObserved)); got != "[50,open)PENDING" {
		t.Fatalf("observed x beside declared: %s", got)
	}
	if v := s.one(`MATCH (:Job {key: $j})-[:HAS_VERSION]->(v:JobVersion) RETURN v.sql AS sql`,
		map[string]any{"j": s.jobKey("model")}); v["sql"] != "select * from x" {
		t.Fatalf("job version %v", v)
	}
}

func TestScenarioPublicationWithheldLaterByDatasetEvent(t *testing.T) {
	s := newScen(t)
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "load", "r1", nil, []olevent.Dataset{s.ds("out")}),
		s.runEv("c1", olevent.TypeComplete, 20, "load", "r1", nil, nil))
	if got := s.intervals(s.edge("out", "load", s.dsKey("out"), graph.KindObserved)); got != "[10,open)PUBLISHED" {
		t.Fatalf("before the gate: %s", got)
	}
	gate := s.ds("out")
	gate.Facets = map[string]json.RawMessage{pubFacetKey: json.RawMessage(
		`{"state":"WITHHELD","reason":"row count check failed","runId":"` + strings.ToUpper(s.runID("r1")) + `"}`)}
	gate.Publication = &olevent.Publication{State: "WITHHELD", Reason: "row count check failed"}
	s.apply(s.dsEv("gate", 30, gate))
	if got := s.intervals(s.edge("out", "load", s.dsKey("out"), graph.KindObserved)); got != "[10,open)WITHHELD" {
		t.Fatalf("after the gate: %s", got)
	}
	w := s.one(`MATCH (:Run {key: $r})-[w:WROTE]->(:Dataset {key: $d}) RETURN w.publication AS p`,
		map[string]any{"r": s.runKey("load", "r1"), "d": s.dsKey("out")})
	if w["p"] != graph.PubWithheld {
		t.Fatalf("wrote %v", w)
	}
	if r := s.run("r1"); r["state"] != olevent.TypeComplete {
		t.Fatalf("the gate changed the run state: %v", r)
	}
}
