package project

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/olevent"
)

func TestScenarioColumnLineageEverySubtypeAndMasking(t *testing.T) {
	s := newScen(t)
	src := withSchema(s.ds("crm.customers"), "id", "email", "amount", "region", "ts", "status")
	in := func(field string, tt ...olevent.Transformation) olevent.InputField {
		return olevent.InputField{Namespace: s.dsNS(), Name: "crm.customers", Field: field, Transformations: tt}
	}
	d := func(sub string) olevent.Transformation { return olevent.Transformation{Type: "DIRECT", Subtype: sub} }
	ind := func(sub string) olevent.Transformation { return olevent.Transformation{Type: "INDIRECT", Subtype: sub} }
	out := withSchema(s.ds("mart.revenue"), "id", "email_hash", "amount", "rank")
	out.ColumnLineage = &olevent.ColumnLineage{
		Fields: map[string][]olevent.InputField{
			"id":         {in("id", d("IDENTITY"))},
			"email_hash": {in("email", olevent.Transformation{Type: "DIRECT", Subtype: "TRANSFORMATION", Masking: true, Description: "sha256"})},
			"amount":     {in("amount", d("AGGREGATION"), ind("GROUP_BY")), in("status", ind("CONDITIONAL"))},
			"rank":       {in("ts", ind("WINDOW"), ind("SORT")), in("legacy_col", d("IDENTITY"))},
		},
		Dataset: []olevent.InputField{in("region", ind("FILTER")), in("id", ind("JOIN"))},
	}
	s.apply(s.runEv("s1", olevent.TypeStart, 10, "build", "r1", []olevent.Dataset{src}, nil),
		s.runEv("c1", olevent.TypeComplete, 20, "build", "r1", []olevent.Dataset{src}, []olevent.Dataset{out}))

	rows := s.query(`MATCH (a:Field)-[c:COLUMN_FEEDS]->(b:Field)<-[:HAS_FIELD]-(:Dataset {key: $out})
		RETURN a.path AS in, b.path AS out, c.tTypes AS types, c.tSubtypes AS subs, c.tMasking AS mask,
			c.tDescriptions AS descs, c.pubs AS pubs, c.jobKey AS job ORDER BY out, in`,
		map[string]any{"out": s.dsKey("mart.revenue")})
	var got []string
	for _, r := range rows {
		if r["job"] != s.jobKey("build") {
			t.Fatalf("jobKey %v", r["job"])
		}
		got = append(got, fmt.Sprintf("%s->%s %v %v %v %v %v", r["in"], r["out"], r["types"], r["subs"], r["mask"], r["descs"], r["pubs"]))
	}
	want := []string{
		"amount->amount [DIRECT INDIRECT] [AGGREGATION GROUP_BY] [false false] [ ] [PUBLISHED]",
		"status->amount [INDIRECT] [CONDITIONAL] [false] [] [PUBLISHED]",
		"email->email_hash [DIRECT] [TRANSFORMATION] [true] [sha256] [PUBLISHED]",
		"id->id [DIRECT] [IDENTITY] [false] [] [PUBLISHED]",
		"legacy_col->rank [DIRECT] [IDENTITY] [false] [] [PUBLISHED]",
		"ts->rank [INDIRECT INDIRECT] [WINDOW SORT] [false false] [ ] [PUBLISHED]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("column edges:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ind2 := s.query(`MATCH (a:Dataset)-[x:INDIRECT_FEEDS]->(b:Dataset {key: $out}) RETURN a.key AS a, x.subtypes AS subs,
		x.jobKey AS job`, map[string]any{"out": s.dsKey("mart.revenue")})
	if len(ind2) != 1 || ind2[0]["a"] != s.dsKey("crm.customers") || fmt.Sprint(ind2[0]["subs"]) != "[FILTER JOIN]" {
		t.Fatalf("indirect feeds %v", ind2)
	}
	legacy := s.one(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field {path: 'legacy_col'}) RETURN f.validFrom AS f`,
		map[string]any{"k": s.dsKey("crm.customers")})
	if legacy["f"] != s.ms(20) {
		t.Fatalf("unknown input field: %v", legacy)
	}

	// a later COMPLETE run whose column lineage omits a mapping closes that column edge.
	out2 := withSchema(s.ds("mart.revenue"), "id", "email_hash", "amount", "rank")
	out2.ColumnLineage = &olevent.ColumnLineage{Fields: map[string][]olevent.InputField{"id": {in("id", d("IDENTITY"))}}}
	s.apply(s.runEv("s2", olevent.TypeStart, 30, "build", "r2", []olevent.Dataset{src}, nil),
		s.runEv("c2", olevent.TypeComplete, 40, "build", "r2", []olevent.Dataset{src}, []olevent.Dataset{out2}))
	closed := s.one(`MATCH (a:Field {path: 'email'})-[c:COLUMN_FEEDS]->(b:Field {path: 'email_hash'}) WHERE b.datasetKey = $out
		RETURN c.tos AS tos, c.validTo AS v`, map[string]any{"out": s.dsKey("mart.revenue")})
	if fmt.Sprint(closed["tos"]) != fmt.Sprintf("[%d]", s.ms(40)) {
		t.Fatalf("omitted mapping not closed: %v", closed)
	}
}

func TestScenarioDroppedAndRecreatedColumnAndDataset(t *testing.T) {
	s := newScen(t)
	s.apply(s.dsEv("v1", 10, withSchema(s.ds("t"), "id", "b")),
		s.dsEv("v3", 30, withSchema(s.ds("t"), "id", "b")),
		s.dsEv("v2", 20, withSchema(s.ds("t"), "id")))
	s.apply(s.runEv("s1", olevent.TypeStart, 12, "w", "r1", nil, []olevent.Dataset{s.ds("t")}),
		s.runEv("c1", olevent.TypeComplete, 15, "w", "r1", nil, nil))
	fields := func() string {
		rows := s.query(`MATCH (:Dataset {key: $k})-[:HAS_FIELD]->(f:Field) RETURN f.path AS p, f.validFrom AS f, f.validTo AS t, f.key AS key
			ORDER BY p, f`, map[string]any{"k": s.dsKey("t")})
		var parts []string
		for _, r := range rows {
			to := "open"
			if r["t"] != graph.OpenEnd {
				to = fmt.Sprint((r["t"].(int64) - s.ms(0)) / 1000)
			}
			if r["key"] != graph.FieldKey(s.dsKey("t"), r["p"].(string), r["f"].(int64)) {
				t.Fatalf("field key is not FieldKey(dataset, path, historyStart): %v", r)
			}
			parts = append(parts, fmt.Sprintf("%s[%d,%s)", r["p"], (r["f"].(int64)-s.ms(0))/1000, to))
		}
		return strings.Join(parts, " ")
	}
	if got := fields(); got != "b[10,20) b[30,open) id[10,open)" {
		t.Fatalf("fields %s", got)
	}
	drop := s.ds("t")
	drop.Lifecycle = &olevent.Lifecycle{State: "DROP"}
	s.apply(s.dsEv("drop", 40, drop))
	if got := fields(); got != "b[10,20) b[30,40) id[10,40)" {
		t.Fatalf("after drop %s", got)
	}
	d := s.one(`MATCH (d:Dataset {key: $k}) RETURN d.droppedAt AS dropped`, map[string]any{"k": s.dsKey("t")})
	if d["dropped"] != s.ms(40) {
		t.Fatalf("droppedAt %v", d)
	}
	if got := s.intervals(s.edge("out", "w", s.dsKey("t"), graph.KindObserved)); got != "[12,40)PUBLISHED" {
		t.Fatalf("drop did not close the edge: %s", got)
	}
	create := withSchema(s.ds("t"), "id")
	create.Lifecycle = &olevent.Lifecycle{State: "CREATE"}
	overwrite := s.ds("t")
	overwrite.Lifecycle = &olevent.Lifecycle{State: "OVERWRITE"}
	overwrite.Version = "snap-2"
	s.apply(s.dsEv("create", 50, create), s.runEv("s2", olevent.TypeStart, 60, "w", "r2", nil, []olevent.Dataset{overwrite}),
		s.runEv("c2", olevent.TypeComplete, 70, "w", "r2", nil, nil))
	if got := fields(); got != "b[10,20) b[30,40) id[10,40) id[50,open)" {
		t.Fatalf("after create %s", got)
	}
	d = s.one(`MATCH (d:Dataset {key: $k}) RETURN d.droppedAt AS dropped`, map[string]any{"k": s.dsKey("t")})
	if d["dropped"] != nil {
		t.Fatalf("create did not revive: %v", d)
	}
	if got := s.intervals(s.edge("out", "w", s.dsKey("t"), graph.KindObserved)); got != "[12,40)PUBLISHED [60,open)PUBLISHED" {
		t.Fatalf("new history: %s", got)
	}
	v := s.one(`MATCH (v:DatasetVersion)-[:VERSION_OF]->(:Dataset {key: $k}) RETURN v.version AS v, v.lifecycle AS lc`,
		map[string]any{"k": s.dsKey("t")})
	if v["v"] != "snap-2" || v["lc"] != "OVERWRITE" {
		t.Fatalf("version %v", v)
	}
	w := s.one(`MATCH (:Run {key: $r})-[w:WROTE]->(:Dataset {key: $k}) RETURN w.datasetVersion AS v`,
		map[string]any{"r": s.runKey("w", "r2"), "k": s.dsKey("t")})
	if w["v"] != "snap-2" {
		t.Fatalf("wrote %v", w)
	}
}
