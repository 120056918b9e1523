package api

import (
	"encoding/base64"
	"strings"
)

// Kind prefixes of typed internal keys inside public ids.
const (
	idDataset = "D"
	idField   = "F"
	idJob     = "J"
	idRun     = "R"
	idVersion = "V"
	idEdge    = "E"
	idEvent   = "X"
)

// encodeID makes the public id of a node: base64url of "<kind>:<key>". Keys never change on rename.
func encodeID(kind, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + key))
}

// decodeID splits a public id into kind and key; ok is false for anything that is not one of ours.
func decodeID(id string) (kind, key string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", "", false
	}
	kind, key, ok = strings.Cut(string(b), ":")
	return kind, key, ok && key != ""
}

// DatasetID is the public id of a dataset key.
func DatasetID(key string) string { return encodeID(idDataset, key) }

// FieldID is the public id of a field key.
func FieldID(key string) string { return encodeID(idField, key) }

// JobID is the public id of a job key.
func JobID(key string) string { return encodeID(idJob, key) }

// RunID is the public id of a run key.
func RunID(key string) string { return encodeID(idRun, key) }

// EdgeID is the public id of a lineage edge (from, to, job).
func EdgeID(from, to, jobKey string) string { return encodeID(idEdge, from+"|"+to+"|"+jobKey) }

// VersionID is the public id of a job version key.
func VersionID(key string) string { return encodeID(idVersion, key) }

// RunKeyOf accepts a run's node id or its runId and returns the run key.
func RunKeyOf(id string) string {
	if kind, key, ok := decodeID(id); ok && kind == idRun {
		return key
	}
	return strings.ToLower(strings.TrimSpace(id))
}
