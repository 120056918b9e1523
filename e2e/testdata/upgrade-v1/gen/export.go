package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/internal/testenv"
)

// Graph is graph.json: every node and relationship version 1 wrote for the fixture, nodes sorted by labels and
// key, relationships by their ends; each property value is tagged with its Neo4j type ({"s": string}, {"i": int},
// {"f": float}, {"b": bool}, {"y": base64 bytes}, {"l": [values]}) so it loads back exactly.
type Graph struct {
	Namespace string `json:"namespace"`
	Nodes     []Node `json:"nodes"`
	Rels      []Rel  `json:"rels"`
}

// Node is one exported node; Rel names its ends by their index in Nodes.
type Node struct {
	Labels []string       `json:"labels"`
	Props  map[string]any `json:"props"`
}

type Rel struct {
	Type  string         `json:"type"`
	From  int            `json:"from"`
	To    int            `json:"to"`
	Props map[string]any `json:"props"`
}

// seedQuery finds the fixture's nodes: everything under its namespaces (as project.Dump scopes them), the events
// and quarantine records of the archived ids, the runs of its runIds (placeholders too) and internal nodes that
// name a seed dataset by key. The export then follows every relationship from those nodes to a fixpoint.
const seedQuery = `
CALL () {
	MATCH (n) WHERE (n:Dataset OR n:Job OR n:DatasetName OR n:UnresolvedIdentity) AND any(p IN $ps WHERE n.namespace STARTS WITH p) RETURN n
	UNION MATCH (n:Event|Quarantined) WHERE n.key IN $ids OR n.eventId IN $ids RETURN n
	UNION MATCH (n:Run) WHERE n.key IN $runs OR n.runId IN $runs RETURN n
	UNION MATCH (n:Role|Grant|RoleBinding) WHERE n.name = $role OR n.role = $role RETURN n
}
WITH collect(n) AS seeds
CALL (seeds) {
	UNWIND seeds AS s
	WITH s WHERE s:Dataset
	MATCH (x) WHERE x.datasetKey = s.key AND NOT x:Field AND NOT x:DatasetVersion
	RETURN collect(DISTINCT x) AS more
}
RETURN [n IN seeds + more | elementId(n)] AS ids`

func export(fx string, ids, runs []string, identities bool) (*Graph, error) {
	ctx := context.Background()
	drv, err := neo4j.NewDriverWithContext(testenv.Neo4jURI(), neo4j.NoAuth())
	if err != nil {
		return nil, err
	}
	defer drv.Close(ctx)
	q := func(cypher string, params map[string]any) ([]*neo4j.Record, error) {
		res, err := neo4j.ExecuteQuery(ctx, drv, cypher, params, neo4j.EagerResultTransformer)
		if err != nil {
			return nil, err
		}
		return res.Records, nil
	}
	ps := []string{fx + "-", "s3://" + fx + "-", "postgres://" + fx + "-"}
	role := "" // the API-granted reader role of the upgrade-v2 world (the policy file's roles are the test's own)
	if identities {
		ps = append(ps, "hive://"+fx+"-", "mysql://"+fx+"-", "hdfs://"+fx+"-", "kafka://"+fx+"-", "snowflake://"+fx+"-")
		role = fx + "-pg-reader"
	}
	if scansWorld { // the catalog table of the time-travel read (scans.go)
		ps = append(ps, "http://"+fx+"-", "iceberg://"+fx+"-")
	}
	recs, err := q(seedQuery, map[string]any{"ps": ps, "ids": ids, "runs": runs, "role": role})
	if err != nil {
		return nil, err
	}
	v, _ := recs[0].Get("ids")
	set := map[string]bool{}
	frontier := []any{}
	for _, id := range v.([]any) {
		if !set[id.(string)] {
			set[id.(string)] = true
			frontier = append(frontier, id)
		}
	}
	for len(frontier) > 0 { // follow relationships both ways to a fixpoint
		recs, err := q(`UNWIND $ids AS id MATCH (a) WHERE elementId(a) = id MATCH (a)--(b) RETURN collect(DISTINCT elementId(b)) AS ids`,
			map[string]any{"ids": frontier})
		if err != nil {
			return nil, err
		}
		v, _ := recs[0].Get("ids")
		frontier = frontier[:0]
		for _, id := range v.([]any) {
			if !set[id.(string)] {
				set[id.(string)] = true
				frontier = append(frontier, id)
			}
		}
		if len(set) > 5000 {
			return nil, fmt.Errorf("the fixture's subgraph reaches beyond its namespaces (%d nodes)", len(set))
		}
	}
	all := make([]string, 0, len(set))
	for id := range set {
		all = append(all, id)
	}
	recs, err = q(`UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN n`, map[string]any{"ids": all})
	if err != nil {
		return nil, err
	}
	type named struct {
		elem string
		node Node
		sort string
	}
	var nodes []named
	for _, r := range recs {
		v, _ := r.Get("n")
		n := v.(neo4j.Node)
		labels := append([]string(nil), n.Labels...)
		sort.Strings(labels)
		props, err := tagProps(n.Props)
		if err != nil {
			return nil, fmt.Errorf("node %v: %w", labels, err)
		}
		b, _ := json.Marshal(props)
		key, _ := n.Props["key"].(string)
		if key == "" {
			key, _ = n.Props["ident"].(string)
		}
		nodes = append(nodes, named{n.ElementId, Node{labels, props}, strings.Join(labels, ":") + "\x00" + key + "\x00" + string(b)})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].sort < nodes[j].sort })
	g := &Graph{Namespace: fx}
	index := map[string]int{}
	for i, n := range nodes {
		index[n.elem] = i
		g.Nodes = append(g.Nodes, n.node)
	}
	recs, err = q(`UNWIND $ids AS id MATCH (a)-[r]->(b) WHERE elementId(a) = id RETURN r`, map[string]any{"ids": all})
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		v, _ := r.Get("r")
		rel := v.(neo4j.Relationship)
		to, ok := index[rel.EndElementId]
		if !ok {
			return nil, fmt.Errorf("relationship %s leaves the fixture", rel.Type)
		}
		props, err := tagProps(rel.Props)
		if err != nil {
			return nil, fmt.Errorf("relationship %s: %w", rel.Type, err)
		}
		g.Rels = append(g.Rels, Rel{rel.Type, index[rel.StartElementId], to, props})
	}
	sort.Slice(g.Rels, func(i, j int) bool {
		a, b := g.Rels[i], g.Rels[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		x, _ := json.Marshal(a.Props)
		y, _ := json.Marshal(b.Props)
		return string(x) < string(y)
	})
	return g, nil
}

func tagProps(props map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(props))
	for k, v := range props {
		t, err := tag(v)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", k, err)
		}
		out[k] = t
	}
	return out, nil
}

func tag(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return map[string]any{"s": x}, nil
	case int64:
		return map[string]any{"i": x}, nil
	case float64:
		return map[string]any{"f": x}, nil
	case bool:
		return map[string]any{"b": x}, nil
	case []byte:
		return map[string]any{"y": b64(x)}, nil
	case []any:
		l := make([]any, 0, len(x))
		for _, e := range x {
			t, err := tag(e)
			if err != nil {
				return nil, err
			}
			l = append(l, t)
		}
		return map[string]any{"l": l}, nil
	}
	return nil, fmt.Errorf("unsupported property type %T", v)
}
