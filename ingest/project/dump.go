package project

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// dumpExcluded are properties left out of Dump: delivery dependent (receive time, the sending principal), internal
// projection state, or the stored event payload (the input, not the projection).
var dumpExcluded = map[string]bool{"receivedAt": true, "principal": true, "payload": true, "ptag": true, "fieldsSig": true, "projState": true, "projLock": true,
	"claim": true, "edgeCkpt": true, "metaStamps": true, projHashProp: true, "pos": true, "projSeq": true, "projSnap": true}

// Dump renders every node and relationship of the projection under a namespace prefix as sorted, deterministic
// text, so "the same graph" is a diff. Scope: datasets (by current or any bound name), jobs, their runs, events,
// versions, fields and unresolved identities whose namespace starts with the prefix.
func Dump(ctx context.Context, store *graph.Store, namespacePrefix string) (string, error) {
	res, err := neo4j.ExecuteQuery(ctx, store.Driver, dumpQuery, map[string]any{"p": namespacePrefix},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(store.Database),
		neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return "", fmt.Errorf("dump %s: %w", namespacePrefix, err)
	}
	ids := map[string]string{}
	var lines []string
	for _, rec := range res.Records {
		nodes, _ := rec.Get("nodes")
		for _, n := range nodes.([]any) {
			node := n.(neo4j.Node)
			ids[node.ElementId] = nodeName(node)
			lines = append(lines, "N "+nodeName(node)+" "+renderProps(node.Props))
		}
	}
	for _, rec := range res.Records {
		rels, _ := rec.Get("rels")
		for _, r := range rels.([]any) {
			rel := r.(neo4j.Relationship)
			a, okA := ids[rel.StartElementId]
			b, okB := ids[rel.EndElementId]
			if okA && okB {
				lines = append(lines, "R "+a+" -["+rel.Type+"]-> "+b+" "+renderProps(rel.Props))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

const dumpQuery = `
CALL () {
	MATCH (d:Dataset) WHERE d.namespace STARTS WITH $p RETURN d AS n
	UNION MATCH (nm:DatasetName)-[:NAMES]->(d:Dataset) WHERE nm.namespace STARTS WITH $p RETURN d AS n
	UNION MATCH (nm:DatasetName) WHERE nm.namespace STARTS WITH $p RETURN nm AS n
	UNION MATCH (j:Job) WHERE j.namespace STARTS WITH $p RETURN j AS n
	UNION MATCH (u:UnresolvedIdentity) WHERE u.namespace STARTS WITH $p RETURN u AS n
	UNION MATCH (e:Event {kind: 'DATASET'}) WHERE e.subjectNamespace STARTS WITH $p RETURN e AS n
}
WITH collect(DISTINCT n) AS base
CALL (base) {
	UNWIND base AS b
	OPTIONAL MATCH (b)-[:HAS_FIELD|HAS_VERSION]->(x)
	OPTIONAL MATCH (b)<-[:VERSION_OF|OF_JOB|ABOUT_JOB]-(y)
	OPTIONAL MATCH (b)<-[:OF_JOB]-(:Run)<-[:OF_RUN]-(z:Event)
	RETURN collect(DISTINCT x) + collect(DISTINCT y) + collect(DISTINCT z) AS more
}
WITH base + more AS all
CALL (all) {
	UNWIND all AS a
	OPTIONAL MATCH (a)-[:CHILD_OF|OF_RUN]->(p:Run)
	RETURN collect(DISTINCT p) AS parents
}
WITH all + parents AS nodes
UNWIND nodes AS n
WITH collect(DISTINCT n) AS nodes
CALL (nodes) {
	UNWIND nodes AS a
	MATCH (a)-[r]->(b) WHERE b IN nodes
	RETURN collect(DISTINCT r) AS rels
}
RETURN nodes, rels`

func nodeName(n neo4j.Node) string {
	labels := append([]string(nil), n.Labels...)
	sort.Strings(labels)
	key, _ := n.Props["key"].(string)
	if key == "" {
		key, _ = n.Props["ident"].(string)
	}
	return strings.Join(labels, ":") + "(" + key + ")"
}

func renderProps(props map[string]any) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		if !dumpExcluded[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+renderValue(props[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func renderValue(v any) string {
	switch x := v.(type) {
	case int64:
		if x == graph.OpenEnd {
			return "open"
		}
		return fmt.Sprint(x)
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = renderValue(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return fmt.Sprint(x)
	}
}
