package hopread

import (
	"context"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/graph"
)

// datasetHopNamesCypher finds the distinct dataset neighbours of each frontier dataset in force at $t and returns
// only their keys and identities (now and at $t): what a permission check needs, without the relationships, jobs
// and run counts a full hop projects. It lets the expander tell visible from hidden neighbours of a hub by
// reading the hidden ones this cheaply, and then project only the visible ones.
func datasetHopNamesCypher(down bool) string {
	through := `(s)-[a:INPUT_TO]->(j)-[b:OUTPUT_TO]->(n)`
	declared := `(s)-[c:DECLARED_FEEDS]->(n:Dataset)`
	if !down {
		through = `(s)<-[b:OUTPUT_TO]-(j)<-[a:INPUT_TO]-(n)`
		declared = `(s)<-[c:DECLARED_FEEDS]-(n:Dataset)`
	}
	// One record per frontier node with a flat list per neighbour (key, current namespace, name, env, then the
	// identity at $t only when it may differ): a hub's thousand neighbours cost a thousand short lists, not maps.
	return `UNWIND $keys AS k
MATCH (s:Dataset {key: k})
CALL (s) {
  MATCH ` + through + `
  WHERE a.validTo > $t AND b.validTo > $t AND ` + graph.InForceCypher("a") + ` AND ` + graph.InForceCypher("b") + `
  RETURN n
  UNION
  MATCH ` + declared + `
  WHERE c.validTo > $t AND ` + graph.InForceCypher("c") + `
  RETURN n
}
WITH k, n, ` + graph.NameAtCypher("n") + ` AS at
RETURN k AS src, collect(CASE WHEN at.namespace = n.namespace AND at.name = n.name
  THEN [n.key, n.namespace, n.name, coalesce(n.env, '')]
  ELSE [n.key, n.namespace, n.name, coalesce(n.env, ''), at.namespace, at.name, coalesce(at.env, '')] END) AS ns`
}

// DatasetHopNames reads, for every frontier dataset, each dataset neighbour once (Src, Dst, DstName, DstCurrent
// set; no relationships, no job), in key order per frontier node. One query for the whole frontier.
func (s *Store) DatasetHopNames(ctx context.Context, q graph.HopQuery) ([]graph.HopRow, error) {
	recs, err := s.ReadRecords(ctx, datasetHopNamesCypher(q.Down), hopParams(q))
	if err != nil {
		return nil, err
	}
	var out []graph.HopRow
	for _, r := range recs {
		src, _ := r["src"].(string)
		list, _ := r["ns"].([]any)
		rows := make([]graph.HopRow, 0, len(list))
		for _, x := range list {
			if row, ok := namesRow(src, x); ok {
				rows = append(rows, row)
			}
		}
		slices.SortFunc(rows, func(a, b graph.HopRow) int { return strings.Compare(a.Dst, b.Dst) })
		out = append(out, rows...)
	}
	return out, nil
}

// namesRow decodes one neighbour list of DatasetHopNames.
func namesRow(src string, x any) (graph.HopRow, bool) {
	l, _ := x.([]any)
	str := func(i int) string {
		if i >= len(l) {
			return ""
		}
		s, _ := l[i].(string)
		return s
	}
	if len(l) < 4 {
		return graph.HopRow{}, false
	}
	cur := graph.NameRef{Namespace: str(1), Name: str(2), Env: str(3)}
	at := cur
	if len(l) >= 7 {
		at = graph.NameRef{Namespace: str(4), Name: str(5), Env: str(6)}
	}
	return graph.HopRow{Src: src, Dst: str(0), DstName: at, DstCurrent: cur}, true
}

// datasetHopToCypher is the full dataset hop restricted to given neighbours of each frontier dataset: both ends
// are bound, so neighbours not listed (those the caller may not see) are never projected.
func datasetHopToCypher(down bool) string {
	through := `(s)-[a:INPUT_TO]->(j)-[b:OUTPUT_TO]->(n)`
	declared := `(s)-[c:DECLARED_FEEDS]->(n)`
	if !down {
		through = `(s)<-[b:OUTPUT_TO]-(j)<-[a:INPUT_TO]-(n)`
		declared = `(s)<-[c:DECLARED_FEEDS]-(n)`
	}
	return `UNWIND $only AS p
MATCH (s:Dataset {key: p.src})
UNWIND p.dsts AS dk
MATCH (n:Dataset {key: dk})
CALL (s, n) {
  MATCH ` + through + `
  WHERE a.validTo > $t AND b.validTo > $t AND ` + graph.InForceCypher("a") + ` AND ` + graph.InForceCypher("b") + `
  RETURN ` + jobBrief + ` AS job, ` + edgeRel("a") + ` AS inRel, ` + edgeRel("b") + ` AS outRel
  UNION ALL
  MATCH ` + declared + `
  WHERE c.validTo > $t AND ` + graph.InForceCypher("c") + `
  RETURN null AS job, null AS inRel, properties(c) AS outRel
}
RETURN p.src AS src, n.key AS dst, job, inRel, outRel, ` + graph.NameAtCypher("n") + ` AS dstName, n{.namespace, .name, .env} AS dstCurrent`
}

// DatasetHopTo reads the full rows (as DatasetHop) between each frontier dataset and only the neighbours
// only[src] lists. q.Keys and q.Limit are ignored.
func (s *Store) DatasetHopTo(ctx context.Context, q graph.HopQuery, only map[string][]string) ([]graph.HopRow, error) {
	pairs := make([]any, 0, len(only))
	for src, dsts := range only {
		ds := make([]any, len(dsts))
		for i, d := range dsts {
			ds[i] = d
		}
		pairs = append(pairs, map[string]any{"src": src, "dsts": ds})
	}
	params := hopParams(q)
	params["only"] = pairs
	recs, err := s.ReadRecords(ctx, datasetHopToCypher(q.Down), params)
	if err != nil {
		return nil, err
	}
	return datasetRows(recs), nil
}
