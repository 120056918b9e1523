package resolvers

import (
	"strings"
	"testing"
	"time"
)

// lowerCanon canonicalises like a case-insensitive platform would.
type lowerCanon struct{}

func (lowerCanon) Dataset(ns, name string) (string, string, string, error) {
	return "", strings.ToLower(ns), strings.ToLower(name), nil
}
func (lowerCanon) Job(ns, name string) (string, string, error) {
	return strings.ToLower(ns), strings.ToLower(name), nil
}

func TestQueriesCanonicaliseLikeEvents(t *testing.T) {
	h := newHarness(t, func(d *testDeps) { d.Canonicalizer = lowerCanon{} })
	chain(h.fx)
	g := h.lineage(map[string]any{"start": dsStart(strings.ToUpper(h.fx.NS), "A"), "dir": "DOWNSTREAM"})
	if !eq(g.names(), []string{"a", "b", "c"}) {
		t.Fatalf("pasted upper-case identifier: %v", g.names())
	}
	var d struct {
		Job struct{ Name string } `json:"job"`
	}
	h.mustQuery(`query($ns: String!) { job(namespace: $ns, name: "J1") { name } }`, map[string]any{"ns": strings.ToUpper(h.fx.NS)}, &d)
	if d.Job.Name != "j1" {
		t.Fatalf("job = %+v", d.Job)
	}
}

func TestSearchAndAliases(t *testing.T) {
	h := newHarness(t)
	fx := h.fx
	b := fx.Dataset("orders_" + fx.NS)
	fx.Dataset("customers_" + fx.NS)
	fx.Job("load_orders_" + fx.NS)
	fx.Rename(b, "orders_"+fx.NS, "orders_v2_"+fx.NS, fx.Now.Add(-time.Hour))
	var s struct {
		Search struct {
			Nodes []struct {
				Typename string `json:"__typename"`
				Name     string `json:"name"`
			} `json:"nodes"`
			HasNextPage bool    `json:"hasNextPage"`
			EndCursor   *string `json:"endCursor"`
		} `json:"search"`
	}
	q := `query($q: String!, $after: String) { search(query: $q, first: 2, after: $after) {
  nodes { __typename ... on Dataset { name } ... on Job { name } } hasNextPage endCursor } }`
	var got []string
	h.mustQuery(q, map[string]any{"q": fx.NS}, &s)
	for _, n := range s.Search.Nodes {
		got = append(got, n.Typename+":"+strings.TrimSuffix(n.Name, fx.NS))
	}
	if !s.Search.HasNextPage || s.Search.EndCursor == nil {
		t.Fatalf("first page: %+v", s.Search)
	}
	h.mustQuery(q, map[string]any{"q": fx.NS, "after": *s.Search.EndCursor}, &s)
	for _, n := range s.Search.Nodes {
		got = append(got, n.Typename+":"+strings.TrimSuffix(n.Name, fx.NS))
	}
	if !eq(got, []string{"Dataset:customers_", "Job:load_orders_", "Dataset:orders_v2_"}) || s.Search.HasNextPage {
		t.Fatalf("search pages = %v (more: %v)", got, s.Search.HasNextPage)
	}
	var d struct {
		Dataset struct {
			Aliases []struct {
				Name    string  `json:"name"`
				Kind    string  `json:"kind"`
				ValidTo *string `json:"validTo"`
			} `json:"aliases"`
		} `json:"dataset"`
	}
	h.mustQuery(`query($ns: String!, $n: String!) { dataset(namespace: $ns, name: $n) { aliases { name kind validTo } } }`,
		map[string]any{"ns": fx.NS, "n": "orders_v2_" + fx.NS}, &d)
	a := d.Dataset.Aliases
	if len(a) != 2 || a[0].Kind != "RENAMED" || a[0].ValidTo == nil || a[1].Kind != "PRIMARY" || a[1].ValidTo != nil {
		t.Fatalf("aliases = %+v", a)
	}
}
