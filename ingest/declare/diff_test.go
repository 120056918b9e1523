package declare

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/headwater-data/headwater/api"
)

func node(uid, ds string, ins []string, cols ...string) DeclaredNode {
	n := DeclaredNode{UniqueID: uid, Dataset: ds, Inputs: ins}
	for _, c := range cols {
		name, typ, _ := strings.Cut(c, ":")
		n.Columns = append(n.Columns, DeclaredColumn{Name: name, Type: typ})
	}
	return n
}

// lines renders a diff as sorted one-line changes.
func lines(d *api.ReleaseDiff) []string {
	var out []string
	for _, n := range d.Added {
		out = append(out, "added "+n.UniqueID+" "+n.Dataset)
	}
	for _, n := range d.Removed {
		out = append(out, "removed "+n.UniqueID+" "+n.Dataset)
	}
	for _, n := range d.Renamed {
		out = append(out, fmt.Sprintf("renamed %s->%s %s->%s (%s)", n.From, n.To, n.FromDataset, n.ToDataset, n.Source))
	}
	s := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	for _, c := range d.Columns {
		out = append(out, fmt.Sprintf("column %s %s %s.%s %s>%s", c.Change, c.UniqueID, c.Dataset, c.Column, s(c.FromType), s(c.ToType)))
	}
	for _, c := range d.Dependencies {
		out = append(out, fmt.Sprintf("dependency %s %s %s", c.Change, c.UniqueID, c.Dependency))
	}
	slices.Sort(out)
	return out
}

// The diff of a candidate against the current declarations: nodes by unique id (a rename only where said),
// declared columns (case-insensitive names, types when both sides have one), dependencies.
func TestDiff(t *testing.T) {
	cur := []DeclaredNode{
		node("model.p.a", "db.a", nil, "id:integer", "amount:double"),
		node("model.p.b", "db.b", []string{"db.a"}, "id", "Name:varchar"),
		node("model.p.c", "db.c", []string{"db.a", "db.b"}),
	}
	cases := []struct {
		name      string
		candidate []DeclaredNode
		renamed   map[string]string
		want      []string
		err       string
	}{
		{name: "same", candidate: cur, want: nil},
		{name: "column removed, added, retyped; case of names ignored",
			candidate: []DeclaredNode{node("model.p.a", "db.a", nil, "ID:INTEGER", "amount:decimal(10,2)", "note:text"), cur[1], cur[2]},
			want:      []string{"column ADDED model.p.a db.a.note ->text", "column RETYPED model.p.a db.a.amount double>decimal(10,2)"}},
		{name: "a type on one side only is not a retype",
			candidate: []DeclaredNode{cur[0], node("model.p.b", "db.b", []string{"db.a"}, "id:integer"), cur[2]},
			want:      []string{"column REMOVED model.p.b db.b.Name varchar>-"}},
		{name: "a rename not said is a removal and an addition",
			candidate: []DeclaredNode{cur[0], node("model.p.b2", "db.b2", []string{"db.a"}, "id", "Name:varchar"), node("model.p.c", "db.c", []string{"db.a", "db.b2"})},
			want: []string{"added model.p.b2 db.b2", "dependency ADDED model.p.c db.b2", "dependency REMOVED model.p.c db.b",
				"removed model.p.b db.b"}},
		{name: "a rename by flag compares the pair",
			candidate: []DeclaredNode{cur[0], node("model.p.b2", "db.b2", []string{"db.a"}, "id"), node("model.p.c", "db.c", []string{"db.a", "db.b2"})},
			renamed:   map[string]string{"model.p.b": "model.p.b2"},
			want: []string{"column REMOVED model.p.b2 db.b.Name varchar>-", "dependency ADDED model.p.c db.b2", "dependency REMOVED model.p.c db.b",
				"renamed model.p.b->model.p.b2 db.b->db.b2 (flag)"}},
		{name: "a rename by meta",
			candidate: []DeclaredNode{cur[0], {UniqueID: "model.p.b2", Dataset: "db.b2", Inputs: []string{"db.a"}, Columns: cur[1].Columns, RenamedFrom: "model.p.b"}, cur[2]},
			want:      []string{"renamed model.p.b->model.p.b2 db.b->db.b2 (meta)"}},
		{name: "dependency removed and added", candidate: []DeclaredNode{cur[0], cur[1], node("model.p.c", "db.c", []string{"db.b", "db.x"})},
			want: []string{"dependency ADDED model.p.c db.x", "dependency REMOVED model.p.c db.a"}},
		{name: "rename of something not current", candidate: cur, renamed: map[string]string{"model.p.zz": "model.p.a"},
			err: "renamed: model.p.zz is not in the project's current declarations"},
		{name: "rename to something not in the candidate", candidate: cur[:2], renamed: map[string]string{"model.p.c": "model.p.d"},
			err: "renamed: model.p.d is not in the candidate manifest"},
		{name: "rename of a node still there", candidate: append(slices.Clone(cur), node("model.p.d", "db.d", nil)), renamed: map[string]string{"model.p.c": "model.p.d"},
			err: "renamed: model.p.c is still in the candidate manifest (a rename removes it)"},
		{name: "meta rename naming what is not current",
			candidate: []DeclaredNode{cur[0], cur[1], cur[2], {UniqueID: "model.p.e", Dataset: "db.e", RenamedFrom: "model.p.nope"}},
			err:       "nodes[model.p.e].meta.headwater_renamed_from: model.p.nope is not in the project's current declarations"},
		{name: "flag and meta disagree",
			candidate: []DeclaredNode{cur[0], cur[1], {UniqueID: "model.p.e", Dataset: "db.e", RenamedFrom: "model.p.c"}, node("model.p.f", "db.f", nil)},
			renamed:   map[string]string{"model.p.c": "model.p.f"},
			err:       "renamed: model.p.c is renamed to model.p.f by the request and to model.p.e by meta.headwater_renamed_from"},
		{name: "no current declarations: everything added", candidate: cur[:1], want: []string{"added model.p.a db.a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			current := cur
			if tc.name == "no current declarations: everything added" {
				current = nil
			}
			d, err := Diff(current, tc.candidate, tc.renamed)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := lines(d); !slices.Equal(got, tc.want) {
				t.Fatalf("diff:\ngot  %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
		})
	}
}

func TestParseRenamed(t *testing.T) {
	got, err := ParseRenamed("shop", []string{"stg_customers=stg_people", "snapshot.shop.a=snapshot.shop.b"})
	if err != nil || got["model.shop.stg_customers"] != "model.shop.stg_people" || got["snapshot.shop.a"] != "snapshot.shop.b" {
		t.Fatalf("%v %v", got, err)
	}
	for in, want := range map[string]string{
		"nope":    `renamed[0]: must be old=new (unique ids or model names), got "nope"`,
		"=b":      `renamed[0]: must be old=new (unique ids or model names), got "=b"`,
		"a=b,a=c": "renamed[1]: model.shop.a is renamed twice",
	} {
		if _, err := ParseRenamed("shop", strings.Split(in, ",")); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// The candidate side is exactly what the declaration would send: the e2e project's nodes, their relations and
// inputs (a seed read through ref() included), and the meta keys read (this fixture, a `dbt parse` of an older
// schema.yml, has no declared columns: TestDiff covers them).
func TestFromManifest(t *testing.T) {
	m := readManifest(t, func(doc map[string]any) {
		n := doc["nodes"].(map[string]any)["model.hw_producers.customer_totals"].(map[string]any)
		n["meta"] = map[string]any{"owner": "finance@example.com", MetaRenamedFrom: "model.hw_producers.totals"}
	})
	nodes, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		got = append(got, fmt.Sprintf("%s %s <- %s owner=%q from=%q cols=%d", n.UniqueID, n.Dataset, strings.Join(n.Inputs, ","), n.Owner, n.RenamedFrom, len(n.Columns)))
		for _, tt := range n.Tests {
			got = append(got, fmt.Sprintf("  test %s %s %s(%s)", tt.UniqueID, tt.Name, tt.TestName, tt.Column))
		}
	}
	want := []string{
		`model.hw_producers.customer_totals warehouse.main.customer_totals <- warehouse.main.stg_customers,warehouse.main.stg_orders owner="finance@example.com" from="model.hw_producers.totals" cols=0`,
		`model.hw_producers.stg_customers warehouse.main.stg_customers <- warehouse.main.raw_customers owner="" from="" cols=0`,
		`  test test.hw_producers.not_null_stg_customers_customer_id.e2cfb1f9aa not_null_stg_customers_customer_id not_null(customer_id)`,
		`  test test.hw_producers.unique_stg_customers_customer_id.c7614daada unique_stg_customers_customer_id unique(customer_id)`,
		`model.hw_producers.stg_orders warehouse.main.stg_orders <- warehouse.main.raw_orders owner="" from="" cols=0`,
		`  test test.hw_producers.not_null_stg_orders_order_id.81cfe2fe64 not_null_stg_orders_order_id not_null(order_id)`,
		`  test test.hw_producers.unique_stg_orders_order_id.e3b841c71a unique_stg_orders_order_id unique(order_id)`,
		`seed.hw_producers.raw_customers warehouse.main.raw_customers <-  owner="" from="" cols=0`,
		`seed.hw_producers.raw_orders warehouse.main.raw_orders <-  owner="" from="" cols=0`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
