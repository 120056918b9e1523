package declare

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/ingest/project"
)

// RecordReader runs one read query (graph.Store).
type RecordReader interface {
	ReadRecords(ctx context.Context, cypher string, params map[string]any) ([]map[string]any, error)
}

// Visibility says which datasets and jobs the caller may see (catalog.Catalog: one batched check each).
type Visibility interface {
	DatasetsByKeys(ctx context.Context, keys []string, asOf time.Time) (map[string]*api.Dataset, error)
	JobsByKeys(ctx context.Context, keys []string) (map[string]*api.Job, error)
}

// Current is the project's current declarations as the graph holds them.
type Current struct {
	// At is the time of the latest declaration (its manifest's generated_at); zero when there is none.
	At    time.Time
	Nodes []DeclaredNode
}

// currentQ reads every dbt node job of the job namespace with the declarations this package sent about it,
// keeping each job's latest declaration and, of those, the ones of the latest declaration time: the nodes of the
// manifest imported last (a node a later manifest left out keeps an older declaration and is not current).
const currentQ = `
MATCH (j:Job {namespace: $ns}) WHERE j.dbtRole = 'NODE' AND j.dbtUniqueId IS NOT NULL
MATCH (j)<-[:ABOUT_JOB]-(e:Event {producer: $producer})
WITH j, max(e.eventTime) AS t
WITH collect({j: j, t: t}) AS rows, max(t) AS latest
UNWIND rows AS r
WITH r.j AS j, r.t AS t, latest WHERE t = latest
MATCH (j)<-[:ABOUT_JOB]-(e:Event {producer: $producer}) WHERE e.eventTime = t
RETURN j.key AS job, j.name AS name, t, head(collect(e.payload)) AS payload
LIMIT $limit`

// ReadCurrent reads the current declarations of the project whose jobs dbt-ol reports in jobNS, as the caller
// may see them: a node whose job or relation is hidden from the caller is left out (so it cannot show as removed,
// and is named nowhere), and so is every hidden input. A job namespace holds one dbt project's declarations
// (dbt-ol's OPENLINEAGE_NAMESPACE is per project).
func ReadCurrent(ctx context.Context, rr RecordReader, vis Visibility, jobNS string, now time.Time) (Current, error) {
	rows, err := rr.ReadRecords(ctx, currentQ, map[string]any{"ns": jobNS, "producer": Producer, "limit": MaxDeclaredNodes + 1})
	if err != nil {
		return Current{}, api.StoreErr(err)
	}
	if len(rows) > MaxDeclaredNodes {
		return Current{}, fmt.Errorf("current declarations: more than %d nodes in job namespace %s", MaxDeclaredNodes, jobNS)
	}
	type node struct {
		job, out string
		ins      []project.DeclaredDataset
		n        DeclaredNode
	}
	var cur Current
	var nodes []node
	var jobKeys, dsKeys []string
	for _, row := range rows {
		d, err := project.DeclarationInPayload(row["payload"])
		if err != nil {
			return Current{}, api.StoreErr(err)
		}
		if d.DbtUniqueID == "" || len(d.Outputs) != 1 {
			continue
		}
		if t, ok := row["t"].(int64); ok {
			cur.At = time.UnixMilli(t).UTC()
		}
		o := d.Outputs[0]
		n := node{job: fmt.Sprint(row["job"]), out: o.Key, ins: d.Inputs,
			n: DeclaredNode{UniqueID: d.DbtUniqueID, Dataset: o.Name, Columns: columnsOf(o.Facets[FacetDeclaredColumns]), JobName: fmt.Sprint(row["name"])}}
		nodes = append(nodes, n)
		jobKeys = append(jobKeys, n.job)
		dsKeys = append(dsKeys, n.out)
		for _, in := range d.Inputs {
			dsKeys = append(dsKeys, in.Key)
		}
	}
	if len(nodes) == 0 {
		return cur, nil
	}
	jobs, err := vis.JobsByKeys(ctx, jobKeys)
	if err != nil {
		return Current{}, err
	}
	slices.Sort(dsKeys)
	dss, err := vis.DatasetsByKeys(ctx, slices.Compact(dsKeys), now)
	if err != nil {
		return Current{}, err
	}
	for _, n := range nodes {
		if jobs[n.job] == nil || dss[n.out] == nil {
			continue
		}
		for _, in := range n.ins {
			if dss[in.Key] != nil {
				n.n.Inputs = append(n.n.Inputs, in.Name)
			}
		}
		cur.Nodes = append(cur.Nodes, n.n)
	}
	slices.SortFunc(cur.Nodes, func(a, b DeclaredNode) int { return strings.Compare(a.UniqueID, b.UniqueID) })
	return cur, nil
}

// columnsOf reads the headwater_declaredColumns facet.
func columnsOf(raw []byte) []DeclaredColumn {
	if len(raw) == 0 {
		return nil
	}
	var f struct {
		Columns []DeclaredColumn `json:"columns"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return f.Columns
}
