package graph

import "strings"

// Latest evidence of lineage edges (docs/adr/0035-write-what-changed.md, docs/graph-model.md "Lineage edges"): the
// properties below change with every run but not in meaning, so the projector keeps them once on the Job (as
// JobEvidenceProp) and an INPUT_TO / OUTPUT_TO or COLUMN_FEEDS keeps its own copy only while its evidence differs
// from the job's. A reader takes coalesce(edge value, job value): EvidenceCypher.

// EdgeEvidenceProps are the evidence properties of an INPUT_TO / OUTPUT_TO.
var EdgeEvidenceProps = []string{"lastObservedAt", "producer", "eventIds", "jobVersion", "lastRunId", "lastRunState",
	"derivation"}

// ColumnEvidenceProps are the evidence properties of a COLUMN_FEEDS (its jobKey names the job).
var ColumnEvidenceProps = []string{"lastRunId", "lastObservedAt"}

// JobEvidenceProp is the Job property holding the job's value of evidence property p: "ev" + p with p's first
// letter upper-cased (evLastRunId).
func JobEvidenceProp(p string) string { return "ev" + strings.ToUpper(p[:1]) + p[1:] }

// EvidenceCypher is a Cypher map of relationship variable rel's properties with its evidence properties (props)
// read through job variable job when the relationship has none of its own. job may be null.
func EvidenceCypher(rel, job string, props []string) string {
	parts := []string{"." + "*"}
	for _, p := range props {
		parts = append(parts, p+": coalesce("+rel+"."+p+", "+job+"."+JobEvidenceProp(p)+")")
	}
	return rel + "{" + strings.Join(parts, ", ") + "}"
}

// RunPublicationCypher is the publication of what run variable r read (a READ stores none): PUBLISHED when the
// run completed (or is a running streaming run), ATTEMPTED when it failed or was aborted, else PENDING. The
// projector's runPub with no publication facet.
func RunPublicationCypher(r string) string {
	return `CASE WHEN ` + r + `.state = 'COMPLETE' OR (` + r + `.processingType = 'STREAMING' AND NOT ` + r +
		`.state IN ['COMPLETE', 'FAIL', 'ABORT']) THEN '` + PubPublished + `' WHEN ` + r +
		`.state IN ['FAIL', 'ABORT'] THEN '` + PubAttempted + `' ELSE '` + PubPending + `' END`
}
