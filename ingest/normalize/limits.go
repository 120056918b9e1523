package normalize

// Length caps, in bytes of UTF-8, on what an identity may be. Neo4j refuses index keys over about 8 KB (8,167
// bytes): a dataset is indexed by (namespace, name) and by "env|namespace|name", a job by (namespace, name), a
// field by (dataset key, path). The caps keep every such key well below that limit, with room for the environment
// and the separators, and they are far above any real name (S3 keys are at most 1,024 bytes, Snowflake and
// BigQuery identifiers a few hundred). docs/adr/0021-what-the-gateway-accepts.md records the choice.
const (
	MaxNamespaceBytes = 1024 // a dataset or job namespace, as sent and canonical
	MaxNameBytes      = 2048 // a dataset or job name, as sent and canonical
	MaxFieldBytes     = 2048 // a field path (schema facet, column lineage), nested names joined by "."
)

// maxBytes is the cap of one identity part.
func maxBytes(part string) int {
	switch part {
	case PartNamespace:
		return MaxNamespaceBytes
	case PartField:
		return MaxFieldBytes
	}
	return MaxNameBytes
}
