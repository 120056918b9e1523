// Package graph is Headwater's temporal lineage graph over Neo4j: the model (labels, relationship types,
// key rules), the driver wrapper, schema migrations and the batched traversal reads the expander uses.
//
// Invariants: times are epoch milliseconds; every node is addressed by a stable internal key derived from the
// identity that created it (never the current name); lineage relationships carry parallel interval arrays
// (froms/tos/pubs). docs/graph-model.md explains the model; this file is its single source of names.
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

// Millis converts a time to the stored representation.
func Millis(t time.Time) int64 { return t.UTC().UnixMilli() }

// FromMillis converts a stored time back; OpenEnd becomes the zero time (an open end).
func FromMillis(ms int64) time.Time {
	if ms >= OpenEnd {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
