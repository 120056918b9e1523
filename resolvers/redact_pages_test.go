package resolvers

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
)

// redactPageAnswer is the part of a lineage page the placeholder test compares.
type redactPageAnswer struct {
	Data struct {
		Lineage struct {
			Nodes []struct {
				Typename    string `json:"__typename"`
				ID          string `json:"id"`
				Name        string `json:"name"`
				NeighbourOf string `json:"neighbourOf"`
				Direction   string `json:"direction"`
			}
			Edges []struct {
				From, To string
			}
			Cursor *string
		}
	}
}

// TestRedactPlaceholderOnEveryPaging: a hub with three visible outputs and one hidden, and one of those outputs
// with two visible outputs and one hidden, in REDACT mode. Whatever the hidden neighbours' key positions (first,
// middle, last among their siblings) and the page size (maxNodes 1, 2, 3, 500), paging through the lineage gives
// the same union of nodes, edges and placeholders, with exactly one placeholder per (visible node, direction)
// that has a hidden neighbour, on the first page that returns that node: its presence says nothing of where the
// hidden keys sort nor how many there are.
func TestRedactPlaceholderOnEveryPaging(t *testing.T) {
	w := newWorld(t, worldOpt{mode: authz.HiddenRedact})
	fx := w.fx
	hub := fx.Dataset("pub.hub")
	outs := []string{fx.Dataset("pub.hv1"), fx.Dataset("pub.hv2"), fx.Dataset("pub.hv3")}
	mid := outs[1]
	subs := []string{fx.Dataset("pub.hw1"), fx.Dataset("pub.hw2")}
	jHub, jMid := fx.Job("pub.jhub"), fx.Job("pub.jmid")
	fx.Flow(jHub, []string{hub}, outs)
	fx.Flow(jMid, []string{mid}, subs)
	var want string
	for _, pos := range []string{"first", "middle", "last"} {
		hHub := w.hiddenAt(pos, outs)
		hMid := w.hiddenAt(pos, subs)
		fx.Flow(jHub, []string{hub}, []string{hHub})
		fx.Flow(jMid, []string{mid}, []string{hMid})
		for _, max := range []int{1, 2, 3, 500} {
			got, placeholders := w.pageUnion("pub.hub", max)
			if placeholders != 2 {
				t.Errorf("hidden %s, maxNodes %d: %d placeholders over all pages, want 2 (hub and pub.hv2 downstream):\n%s",
					pos, max, placeholders, got)
			}
			if want == "" {
				want = got
			} else if got != want {
				t.Errorf("hidden %s, maxNodes %d: union of pages\n%s\nwant (hidden first, maxNodes 1)\n%s", pos, max, got, want)
			}
		}
		for _, k := range []string{hHub, hMid} {
			fx.Exec(`MATCH (d:Dataset {key: $k}) OPTIONAL MATCH (n:DatasetName)-[:NAMES]->(d) DETACH DELETE d, n`,
				map[string]any{"k": k})
		}
	}
}

// hiddenAt creates a hidden dataset whose key sorts at pos (first, middle, last) among the sibling keys.
func (w *world) hiddenAt(pos string, siblings []string) string {
	w.t.Helper()
	sorted := slices.Sorted(slices.Values(siblings))
	for range 10000 {
		name := w.hidden("rp")
		key := graph.DatasetKey(w.fx.Env, w.fx.NS, name)
		n, _ := slices.BinarySearch(sorted, key)
		ok := map[string]bool{"first": n == 0, "middle": n > 0 && n < len(sorted), "last": n == len(sorted)}[pos]
		if ok {
			w.secretKey(key, api.DatasetID(key))
			return w.fx.Dataset(name)
		}
	}
	w.t.Fatalf("no hidden name sorts %s", pos)
	return ""
}

// pageUnion pages through the downstream lineage (depth 2) of a start node with maxNodes max and returns the
// union of what the pages showed (dataset names, edges and placeholders by name) and the number of placeholders.
func (w *world) pageUnion(start string, max int) (string, int) {
	w.t.Helper()
	vars := map[string]any{"ns": w.fx.NS, "name": start, "dir": "DOWNSTREAM", "depth": 2, "gran": "DATASET", "max": max}
	names := map[string]string{}  // id -> name
	firstPage := map[string]int{} // id -> the page that first returned it
	union := map[string]bool{}
	var placeholders []string
	for page := 0; ; page++ {
		if page == 30 {
			w.t.Fatal("pages did not end")
		}
		body := w.post(w.narrow, leakLineageQ, vars)
		w.noLeak(fmt.Sprintf("maxNodes %d page %d", max, page), body)
		var r redactPageAnswer
		if err := json.Unmarshal(body, &r); err != nil {
			w.t.Fatal(err)
		}
		for _, n := range r.Data.Lineage.Nodes {
			if n.Typename == "Dataset" {
				names[n.ID] = n.Name
				if _, seen := firstPage[n.ID]; !seen {
					firstPage[n.ID] = page
				}
				union["node "+n.Name] = true
			}
		}
		for _, n := range r.Data.Lineage.Nodes {
			if n.Typename == "RestrictedNode" {
				of, ok := names[n.NeighbourOf]
				if !ok || firstPage[n.NeighbourOf] != page {
					w.t.Errorf("maxNodes %d: placeholder of %s on page %d, the node was first returned on page %d",
						max, of, page, firstPage[n.NeighbourOf])
				}
				placeholders = append(placeholders, of+"/"+n.Direction)
				union["restricted "+of+" "+n.Direction] = true
			}
		}
		for _, e := range r.Data.Lineage.Edges {
			union["edge "+e.From+">"+e.To] = true
		}
		if r.Data.Lineage.Cursor == nil {
			break
		}
		vars["after"] = *r.Data.Lineage.Cursor
	}
	var lines []string
	for k := range maps.Keys(union) {
		if len(k) > 5 && k[:5] == "edge " { // edges by names: ids differ only by what they name
			lines = append(lines, "edge "+edgeByNames(k[5:], names))
			continue
		}
		lines = append(lines, k)
	}
	slices.Sort(lines)
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out, len(placeholders)
}

func edgeByNames(fromTo string, names map[string]string) string {
	for i := range len(fromTo) {
		if fromTo[i] == '>' {
			return names[fromTo[:i]] + ">" + names[fromTo[i+1:]]
		}
	}
	return fromTo
}
