package olevent

// The facet keys, states and types the facet parsers (ingest/olevent/facets) interpret, named here with the
// event model so its users need no parser import.

// Dataset facet keys Headwater interprets, besides the shared ownership, tags, documentation and lineage.
const (
	FacetSchema        = "schema"
	FacetColumnLineage = "columnLineage"
	FacetSymlinks      = "symlinks"
	FacetLifecycle     = "lifecycleStateChange"
	FacetVersion       = "version"
	FacetPublication   = "headwater_publication"
	// FacetIceberg is the Iceberg catalog sync's own facet (ADR 0041): table uuid, field ids, a snapshot.
	FacetIceberg = "headwater_iceberg"
	// FacetGovernanceBlock is the governance block list of a dataset (ADR 0067): a full list, like tags.
	FacetGovernanceBlock = "headwater_governance_block"
	// FacetIcebergScanReport is the input facet the OpenLineage Spark integration sends for an Iceberg scan: its
	// snapshotId is the snapshot the read scanned (ADR 0084), a JSON double that may have lost digits.
	FacetIcebergScanReport = "icebergScanReport"
)

// Lifecycle states and publication states.
const (
	LifecycleAlter     = "ALTER"
	LifecycleCreate    = "CREATE"
	LifecycleDrop      = "DROP"
	LifecycleOverwrite = "OVERWRITE"
	LifecycleRename    = "RENAME"
	LifecycleTruncate  = "TRUNCATE"

	PublicationPublished = "PUBLISHED"
	PublicationWithheld  = "WITHHELD"
)

// Job facet keys Headwater interprets (ownership, tags, documentation and lineage are shared with datasets).
const (
	FacetJobType            = "jobType"
	FacetSQL                = "sql"
	FacetSourceCode         = "sourceCode"
	FacetSourceCodeLocation = "sourceCodeLocation"
	FacetOwnership          = "ownership"
	FacetTags               = "tags"
	FacetDocumentation      = "documentation"
	FacetLineage            = "lineage"
	FacetDbtNode            = "dbt_node" // openlineage-dbt's DbtNodeJobFacet: the dbt node the job runs
)

// Processing types of the jobType facet. The spec names BATCH and STREAMING; SERVICE is Headwater's own; NONE is
// what the OpenLineage Spark integration sends for the application job (jobType APPLICATION), which wraps the
// SQL jobs that do the processing (issue 14 item 5). Any other value is kept raw with a warning.
const (
	ProcessingBatch     = "BATCH"
	ProcessingStreaming = "STREAMING"
	ProcessingService   = "SERVICE"
	ProcessingNone      = "NONE"
)

// Entity types in the `lineage` facet and transformation types of column lineage.
const (
	EntityDataset = "DATASET"
	EntityJob     = "JOB"

	TransformDirect   = "DIRECT"
	TransformIndirect = "INDIRECT"
)

// Run facet keys Headwater interprets.
const (
	FacetParent       = "parent"
	FacetNominalTime  = "nominalTime"
	FacetErrorMessage = "errorMessage"
)

// Column-lineage transformation subtypes the legacy transformationType values map to.
const (
	SubtypeIdentity       = "IDENTITY"
	SubtypeTransformation = "TRANSFORMATION"
)
