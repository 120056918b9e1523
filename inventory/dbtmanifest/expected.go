package dbtmanifest

import (
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/inventory"
)

// Options say what the manifest does not: where dbt-ol reports the project's jobs and datasets.
type Options struct {
	// JobNamespace is dbt-ol's OPENLINEAGE_NAMESPACE (required).
	JobNamespace string
	// DatasetNamespace is the adapter's OpenLineage namespace as dbt-ol forms it from the profile
	// (duckdb://<path>, postgres://host:port, snowflake://<account>, bigquery, ...). Empty: no expected outputs.
	DatasetNamespace string
	// Schedule applies to nodes whose meta names none (e.g. the schedule of the DAG that runs the project).
	Schedule string
	// Paused marks the nodes that take Schedule paused (the DAG that runs the project is paused).
	Paused bool
}

// Roles of dbt node jobs (ADR 0027): NODE runs the node itself, TESTS runs the generic tests of a node.
const (
	RoleNode  = "NODE"
	RoleTests = "TESTS"
)

// Meta keys and tag prefixes read for each expected job.
const (
	MetaCriticality = "criticality"
	MetaSchedule    = "schedule"
	MetaOwner       = "owner"
	TagCriticality  = "criticality" // a tag criticality:<value> or criticality=<value>
)

// Expected returns the expected jobs of the manifest's enabled models (not ephemeral ones, which never run),
// snapshots and tests. Seeds are not expected jobs: dbt-ol reports no run for them (they appear as datasets).
func Expected(m *Manifest, o Options) ([]inventory.Job, error) {
	if o.JobNamespace == "" {
		return nil, fmt.Errorf("jobNamespace: required for a dbt manifest (dbt-ol's OPENLINEAGE_NAMESPACE)")
	}
	byID := map[string]Node{}
	for _, n := range m.Nodes {
		byID[n.UniqueID] = n
	}
	var out []inventory.Job
	for _, n := range m.Nodes {
		j, ok, err := expectedJob(n, byID, o)
		if err != nil {
			return nil, fmt.Errorf("nodes[%s]: %w", n.UniqueID, err)
		}
		if ok {
			out = append(out, j)
		}
	}
	return out, nil
}

func expectedJob(n Node, byID map[string]Node, o Options) (inventory.Job, bool, error) {
	if !n.Enabled {
		return inventory.Job{}, false, nil
	}
	j := inventory.Job{Namespace: o.JobNamespace, Type: "dbt " + n.ResourceType, DbtUniqueID: n.UniqueID,
		Criticality: criticality(n), Owner: metaString(n, MetaOwner), Schedule: metaString(n, MetaSchedule)}
	if j.Schedule == "" {
		j.Schedule, j.Paused = o.Schedule, o.Paused
	}
	switch n.ResourceType {
	case TypeModel:
		if n.Materialized == "ephemeral" {
			return j, false, nil
		}
		j.Name = n.JobBase()
		j.MatchNames = []string{j.Name, j.Name + ".build.run"}
		j.DbtMatches = []string{n.UniqueID + "|" + RoleNode}
		j.Outputs = outputs(n, o)
	case TypeSnapshot:
		j.Name = n.JobBase()
		j.MatchNames = []string{j.Name + ".snapshot", j.Name + ".build.snapshot"}
		j.DbtMatches = []string{n.UniqueID + "|" + RoleNode}
		j.Outputs = outputs(n, o)
	case TypeTest:
		j.Name = n.UniqueID
		j.MatchNames = []string{n.UniqueID}
		j.DbtMatches = []string{n.UniqueID + "|" + RoleNode}
		if model, ok := byID[n.TestedNode()]; ok {
			base := model.JobBase()
			j.MatchNames = append(j.MatchNames, base+".test", base+".build.test")
			j.DbtMatches = append(j.DbtMatches, model.UniqueID+"|"+RoleTests)
		}
	default:
		return j, false, nil
	}
	var err error
	if j.Interval, err = inventory.ParseSchedule(j.Schedule); err != nil {
		return j, false, err
	}
	return j, true, nil
}

// TestedNode is the node a test is attached to, else its only model dependency ("" when neither).
func (n Node) TestedNode() string {
	if n.AttachedNode != "" {
		return n.AttachedNode
	}
	var models []string
	for _, d := range n.DependsOn {
		if strings.HasPrefix(d, TypeModel+".") {
			models = append(models, d)
		}
	}
	if len(models) == 1 {
		return models[0]
	}
	return ""
}

func outputs(n Node, o Options) []inventory.Dataset {
	if o.DatasetNamespace == "" || n.TableName() == "" {
		return nil
	}
	return []inventory.Dataset{{Namespace: o.DatasetNamespace, Name: n.TableName()}}
}

// criticality is meta.criticality, else the value of a criticality:<v> (or criticality=<v>) tag.
func criticality(n Node) string {
	if c := metaString(n, MetaCriticality); c != "" {
		return c
	}
	for _, t := range n.Tags {
		for _, sep := range []string{":", "="} {
			if v, ok := strings.CutPrefix(t, TagCriticality+sep); ok && v != "" {
				return v
			}
		}
	}
	return ""
}

func metaString(n Node, key string) string {
	if s, ok := n.Meta[key].(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}
