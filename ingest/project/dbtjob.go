package project

import (
	"strings"

	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/normalize"
	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/ownership"
)

// A dbt node's job is identified by (job namespace, dbt_node.unique_id, role), not by the name dbt-ol gave it: its
// names differ by command (`run`, `build`, structured logs) and each is recorded as an alias of the one job
// (docs/adr/0027-dbt-job-identity.md). The rule is a pure function of one event, so the job an event lands on
// does not depend on what was projected before it.

// dbtRoles says, per jobType.jobType, which role a job has for the node its unique_id's resource type names; a
// combination missing here is no dbt node job (the job keeps its (namespace, name) identity).
var dbtRoles = map[string]map[string]string{
	"MODEL":    {"model": graph.DbtRoleNode},
	"SEED":     {"seed": graph.DbtRoleNode},
	"SNAPSHOT": {"snapshot": graph.DbtRoleNode},
	// A test's own job (local-mode singular tests, every test in structured-logs mode), or dbt-ol's per-node
	// test job, which runs the generic tests attached to that node and carries the node's unique_id.
	"TEST": {"test": graph.DbtRoleNode, "model": graph.DbtRoleTests, "source": graph.DbtRoleTests,
		"seed": graph.DbtRoleTests, "snapshot": graph.DbtRoleTests},
}

// dbtRole returns the role of a job of jobType for the dbt node uniqueID, "" when the pair names no dbt node job.
// uniqueID was checked by the decoder (olevent: `<resource type>.<package>.<name>`).
func dbtRole(jobType, uniqueID string) string {
	kind, _, _ := strings.Cut(uniqueID, ".")
	return dbtRoles[strings.ToUpper(jobType)][kind]
}

// applyDbtIdentity makes j the job of its dbt node when the event's dbt_node facet and jobType name one and the
// producer owns the job's namespace (ADR 0018: the alias joins runs only within a namespace it may produce to).
// The run stays keyed by the name it was reported under (NameKey).
func applyDbtIdentity(j *jobRec, ev *olevent.Job, owned ownership.Set) {
	if ev.DbtUniqueID == "" || !owned.Owns(j.NS) {
		return
	}
	role := dbtRole(ev.JobType, ev.DbtUniqueID)
	if role == "" {
		return
	}
	j.NameKey, j.Key = j.Key, graph.DbtJobKey(normalize.KeyNamespace(j.NS), ev.DbtUniqueID, role)
	j.DbtUniqueID, j.DbtRole = ev.DbtUniqueID, role
}

// nameKey is the key of the job as named by the event: runs and parent references are keyed by it.
func (j *jobRec) nameKey() string {
	if j.NameKey != "" {
		return j.NameKey
	}
	return j.Key
}
