// Package graph is Headwater's temporal lineage graph over Neo4j: the model (labels, relationship types,
// key rules), the driver wrapper, schema migrations and the batched traversal reads the expander uses.
//
// Invariants: times are epoch milliseconds; every node is addressed by a stable internal key derived from the
// identity that created it (never the current name); lineage relationships carry parallel interval arrays
// (froms/tos/pubs, interval.go). docs/graph-model.md explains the model. This file lists every node label and
// relationship type the temporal graph's Cypher names (graph, ingest/project, lineage, loadtest/history); the
// Cypher writes them literally, so queries read as Cypher, and TestModelNamesAreTheCypherNames checks both ways
// that the list and the queries agree. Go code that branches on a name uses these constants.
package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// OpenEnd is the validTo of an interval that is still current: 9999-12-31T23:59:59.999Z in epoch milliseconds.
const OpenEnd int64 = 253402300799999

// Node labels.
const (
	LabelDataset            = "Dataset"
	LabelDatasetName        = "DatasetName"
	LabelJob                = "Job"
	LabelJobVersion         = "JobVersion"
	LabelRun                = "Run"
	LabelEvent              = "Event"
	LabelField              = "Field"
	LabelDatasetVersion     = "DatasetVersion"
	LabelUnresolvedIdentity = "UnresolvedIdentity"
	LabelQuarantined        = "Quarantined"
	LabelSchemaVersion      = "SchemaVersion"
	// Internal projector state, read by nothing but the projector (docs/graph-model.md, "Projector details").
	LabelDatasetLogChunk = "DatasetLogChunk"
	LabelJobCheckpoint   = "JobCheckpoint"
	// LabelProjectorProgress is one source partition's replay point (ingest/project/dsfold.go, ADR 0036).
	LabelProjectorProgress = "ProjectorProgress"
	// The expected-job inventory and the trust signals' trend points (inventory/registry, trust; ADR 0031).
	LabelInventorySource = "InventorySource"
	LabelExpectedJob     = "ExpectedJob"
	LabelCoverageSample  = "CoverageSample"
	// LabelCoverageScopeSample is a trend point of one signal for one namespace, criticality, producer or
	// configured scope (trust/sampler; ADR 0043).
	LabelCoverageScopeSample = "CoverageScopeSample"
	// LabelCatalogSyncLease is one catalog's one-active-syncer lease (ingest/icebergsync/schedule, ADR 0049).
	LabelCatalogSyncLease = "CatalogSyncLease"
)

// Relationship types.
const (
	RelNames         = "NAMES"
	RelHasVersion    = "HAS_VERSION"
	RelOfJob         = "OF_JOB"
	RelRanVersion    = "RAN_VERSION"
	RelChildOf       = "CHILD_OF"
	RelOfRun         = "OF_RUN"
	RelAboutJob      = "ABOUT_JOB" // (:Event)-[:ABOUT_JOB]->(:Job) for JobEvents
	RelHasField      = "HAS_FIELD"
	RelVersionOf     = "VERSION_OF"
	RelRead          = "READ"
	RelWrote         = "WROTE"
	RelInputTo       = "INPUT_TO"
	RelOutputTo      = "OUTPUT_TO"
	RelDeclaredFeeds = "DECLARED_FEEDS"
	RelColumnFeeds   = "COLUMN_FEEDS"
	RelIndirectFeeds = "INDIRECT_FEEDS"
)

// Evidence kinds and publication states as stored.
const (
	KindObserved = "OBSERVED"
	KindDeclared = "DECLARED"

	PubPublished = "PUBLISHED"
	PubAttempted = "ATTEMPTED"
	PubWithheld  = "WITHHELD"
	PubPending   = "PENDING"

	// DerivationColumnLineage is the derivation of an OBSERVED INPUT_TO that a run's inputs did not list but the
	// column lineage of one of its outputs names (issue 14 item 3; other OBSERVED edges have derivation "run").
	DerivationColumnLineage = "columnLineage"
)

// NameKind says how a DatasetName binds to a Dataset.
const (
	NamePrimary = "PRIMARY"
	NameRenamed = "RENAMED"
	NameSymlink = "SYMLINK"
	NameAlias   = "ALIAS"
)

func hashKey(prefix string, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return prefix + hex.EncodeToString(h[:12])
}

// DatasetIdent is the unique identifier string of a (canonical) dataset name in an environment.
func DatasetIdent(env, namespace, name string) string { return env + "|" + namespace + "|" + name }

// DatasetKey is the stable key of the Dataset node first created under this identity.
func DatasetKey(env, namespace, name string) string { return hashKey("ds_", env, namespace, name) }

// JobKey is the stable key of a Job node.
func JobKey(namespace, name string) string { return hashKey("job_", namespace, name) }

// DbtJobKey is the key of the Job node of a dbt node (docs/adr/0027-dbt-job-identity.md): the job namespace, the
// node's unique_id (the dbt_node job facet) and the job's role for that node (DbtRoleNode, DbtRoleTests).
func DbtJobKey(namespace, uniqueID, role string) string {
	return hashKey("jdbt_", namespace, uniqueID, role)
}

// Roles of a dbt node's job (Job.dbtRole).
const (
	DbtRoleNode  = "NODE"  // the job runs the node itself (a model, seed, snapshot or test)
	DbtRoleTests = "TESTS" // dbt-ol's per-node test job: the generic tests attached to a model, source, seed or snapshot
)

// JobVersionKey is the key of one definition of a job.
func JobVersionKey(jobKey, definitionHash string) string {
	return hashKey("jv_", jobKey, definitionHash)
}

// FieldKey is the key of one history of a field: a column dropped and re-created starts a new history.
func FieldKey(datasetKey, path string, historyStart int64) string {
	return hashKey("fld_", datasetKey, path, time.UnixMilli(historyStart).UTC().Format(time.RFC3339Nano))
}

// DatasetVersionKey is the key of one version (e.g. an Iceberg snapshot) of a dataset.
func DatasetVersionKey(datasetKey, version string) string { return hashKey("dv_", datasetKey, version) }

// NameGenKey is the cache-generation key of a dataset identifier (canonical ident): the projector bumps it whenever
// what the identifier names may have changed (a binding made, a rename, a symlink), so cached answers found by
// that name are revalidated (docs/caching.md).
func NameGenKey(ident string) string { return hashKey("nm_", ident) }

// UnresolvedKey is the key of an unresolved-identity record.
func UnresolvedKey(namespace, name, reason string) string {
	return hashKey("unres_", namespace, name, reason)
}

// RunKey is the key of a Run node: one runId of one job ("<runId>@<jobKey>"). Two jobs that report the same
// runId have two runs; neither event stream touches the other's (docs/adr/0019-runs-and-event-ids-scoped.md).
// RunKey(runID, "") is the run-id group: the runKey of a DatasetEvent that names a run by its runId only (a
// quality gate's headwater_publication), read by every run of that runId. No node has a group key.
func RunKey(runID, jobKey string) string { return runID + RunKeySep + jobKey }

// RunKeySep separates the runId from the job key in a run key; run ids (UUIDs) and job keys never contain it.
const RunKeySep = "@"

// SplitRunKey returns the runId and job key of a run key; a key without the separator (a run written before
// projection version 2) is a bare runId.
func SplitRunKey(key string) (runID, jobKey string) {
	if i := strings.LastIndex(key, RunKeySep); i >= 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}

// EventKey is the key of an Event (and Quarantined) node: event ids are scoped by the producer principal that
// sent them, so one producer can never claim, squat or read another's id. An empty principal (events built in
// tests) keeps the bare id.
func EventKey(principal, eventID string) string {
	if principal == "" {
		return eventID
	}
	return eventID + EventKeySep + principal
}

// EventKeySep separates an event id from its principal in an event key.
const EventKeySep = "\x1f"

// Millis converts a time to the stored representation.
func Millis(t time.Time) int64 { return t.UTC().UnixMilli() }

// FromMillis converts a stored time back; OpenEnd becomes the zero time (an open end).
func FromMillis(ms int64) time.Time {
	if ms >= OpenEnd {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
