// Package olevent is the OpenLineage event model (spec 2-0-2): the typed Event with the facets Headwater interprets,
// the facet names, the rules a ValidationError or FacetIssue names, the decoder's limits, event ids and the
// canonical JSON they are computed over. Decoding is in two packages below it (ADR 0033): ingest/olevent/decode
// (the strict envelope: JSON scanner, JSON Schema, limits, event time; the Decoder) and ingest/olevent/facets (the
// tolerant facet parsers: malformed interpreted facets flagged rather than fatal, every facet kept raw). None of
// the three knows about Kafka, Neo4j or HTTP.
package olevent

import (
	"encoding/json"
	"time"
)

// Kind tells the three OpenLineage event shapes apart.
type Kind string

const (
	KindRun     Kind = "RUN"
	KindJob     Kind = "JOB"
	KindDataset Kind = "DATASET"
)

// Run event types.
const (
	TypeStart    = "START"
	TypeRunning  = "RUNNING"
	TypeComplete = "COMPLETE"
	TypeAbort    = "ABORT"
	TypeFail     = "FAIL"
	TypeOther    = "OTHER"
)

// Event is one decoded OpenLineage event. Identifiers are canonicalised by package normalize, not here.
type Event struct {
	ID        string // resolved event id (header, envelope eventId, or deterministic; see ResolveID)
	Kind      Kind
	EventType string // RunEvents: START, RUNNING, COMPLETE, ABORT, FAIL or OTHER; "" for Job and Dataset events
	EventTime time.Time
	Producer  string
	SchemaURL string

	Run     *Run      // RunEvent only
	Job     *Job      // RunEvent and JobEvent
	Inputs  []Dataset // RunEvent and JobEvent
	Outputs []Dataset // RunEvent and JobEvent
	Dataset *Dataset  // DatasetEvent only

	FacetIssues []FacetIssue // interpreted facets that were malformed: kept raw, not interpreted
	Raw         json.RawMessage

	// EnvelopeID is the envelope's optional "eventId" as sent ("" when absent); ResolveID prefers a header id.
	EnvelopeID string

	contentID string // deterministic id computed by Decode from the parsed document; "" on hand-built events
}

// FacetIssue records a malformed facet Headwater would interpret; the rest of the event is still used.
type FacetIssue struct {
	Path    string `json:"path"` // e.g. "outputs[0].facets.schema"
	Rule    string `json:"rule"`
	Message string `json:"message"` // plain-English explanation naming the facet and the rule
}

// Run is the run part of a RunEvent.
type Run struct {
	ID           string // lower-case UUID
	Facets       map[string]json.RawMessage
	Deleted      []string // facet keys sent with _deleted: true
	Parent       *ParentRef
	Root         *ParentRef
	NominalStart *time.Time
	NominalEnd   *time.Time
	ErrorMessage string
}

// ParentRef is a parent or root run reference.
type ParentRef struct {
	RunID        string
	JobNamespace string
	JobName      string
}

// Job is the job part of a RunEvent or JobEvent.
type Job struct {
	Namespace      string
	Name           string
	Facets         map[string]json.RawMessage
	Deleted        []string
	ProcessingType string // BATCH or STREAMING (jobType facet); "" when not sent
	JobType        string
	Integration    string
	SQL            string
	SourceCode     string
	SourceLocation string // canonical JSON of sourceCodeLocation (type, url, repoUrl, path, version, tag, branch)
	Description    string

	SQLDialect     string         // sql.dialect, "" when not sent
	SourceLanguage string         // sourceCode.language
	Owners         []Owner        // ownership job facet
	Tags           []Tag          // tags job facet (Field is always "")
	Lineage        []LineageEntry // the job-level `lineage` facet (entries), nil when none
	DbtUniqueID    string         // dbt_node.unique_id (openlineage-dbt), "" when not sent or unusable (ADR 0027)
}

// LineageEntry is one entry of the job-level `lineage` facet: a target (dataset or job) and what feeds it.
type LineageEntry struct {
	Type      string // DATASET or JOB
	Namespace string // "" with Name "" for a JOB entry means the event's own job
	Name      string
	RunID     string // JOB entries only, lower-case, optional
	Inputs    []LineageInput
	Fields    map[string][]LineageInput // DATASET entries only: target field -> inputs
}

// LineageInput is one source of a `lineage` facet relationship: a dataset (optionally a field) or a job.
type LineageInput struct {
	Type            string // DATASET or JOB
	Namespace       string
	Name            string
	Field           string // DATASET inputs only
	RunID           string // JOB inputs only, lower-case, optional
	Transformations []Transformation
}

// Dataset is an input, output, or the subject of a DatasetEvent.
type Dataset struct {
	Namespace    string
	Name         string
	Facets       map[string]json.RawMessage // dataset facets, raw
	InputFacets  map[string]json.RawMessage
	OutputFacets map[string]json.RawMessage
	Deleted      []string

	Schema        []SchemaField  // nil when no (valid) schema facet
	ColumnLineage *ColumnLineage // nil when none
	Symlinks      []Identifier
	Lifecycle     *Lifecycle
	Version       string // version.datasetVersion
	// ScanSnapshot is an input's inputFacets.icebergScanReport.snapshotId exactly as sent (the number's literal,
	// e.g. "8.1756558994744289E18", or the string's text): the snapshot a time-travel read scanned, which the
	// projector matches to the table's recorded snapshot ids (ADR 0084); "" without the facet.
	ScanSnapshot string
	Publication  *Publication
	Owners       []Owner
	Tags         []Tag
	Description  string
	Lineage      *LineageFacet // the OpenLineage `lineage` facet (declared lineage)
	// Blocks is the headwater_governance_block facet's list (ADR 0067); nil without the facet, empty when it
	// lists none (it removes every block).
	Blocks []Block

	// MetadataTable is set on an Iceberg metadata table, which the decoder renamed (metatables.go, ADR 0025); nil
	// for other datasets.
	MetadataTable *MetadataTable
	// Iceberg is what the Iceberg catalog sync's headwater_iceberg facet says of the table (ADR 0041); nil for
	// other datasets.
	Iceberg *IcebergTable
}

// IcebergTable is a catalog table's identity as the catalog sync reports it: the catalog's name in Headwater, the
// table's uuid (its identity through renames) and the metadata file the report was read from; Snapshot is set on
// the event that records one snapshot as a dataset version.
type IcebergTable struct {
	Catalog, TableUUID, MetadataLocation string
	Snapshot                             *IcebergSnapshot
	// Schemas are the table's schemas the sync had not recorded yet, by schema id (decimal text): each path's
	// field id (decimal text) in that schema (projection version 7, ADR 0065); nil when the event sends none.
	Schemas map[string]map[string]string
}

// IcebergSnapshot is one snapshot of an Iceberg table: id and parent as exact decimal text.
type IcebergSnapshot struct {
	ID, Parent     string
	TimestampMs    int64
	SequenceNumber int64
	Operation      string
	Summary        map[string]string
	// SchemaID is the snapshot's Iceberg schema-id as decimal text ("" when the metadata names none): the schema
	// its data was written with (projection version 7, ADR 0065).
	SchemaID string `json:",omitempty"`
}

// MetadataTable records how the decoder renamed an Iceberg metadata table: Base is the identity the producer sent
// (its base table's), and its own name came from symlinks.identifiers[Symlink] (no longer in Symlinks).
type MetadataTable struct {
	Base    Identifier
	Symlink int
}

// SchemaField is one field; nested fields are flattened with Path joined by ".".
type SchemaField struct {
	Path        string
	Type        string
	Description string
	FieldID     string // stable id when the producer sends one (e.g. Iceberg field-id), else ""
}

// ColumnLineage is the parsed columnLineage facet of an output.
type ColumnLineage struct {
	Fields  map[string][]InputField // output field path -> inputs
	Dataset []InputField            // dataset-level dependencies (usually INDIRECT), kept once
}

// InputField is one input of a column-lineage mapping with its transformations.
type InputField struct {
	Namespace       string
	Name            string
	Field           string
	Transformations []Transformation
}

// Transformation keeps OpenLineage semantics; legacy transformationType is mapped to these.
type Transformation struct {
	Type        string // DIRECT or INDIRECT
	Subtype     string // IDENTITY, TRANSFORMATION, AGGREGATION, JOIN, GROUP_BY, FILTER, SORT, WINDOW, CONDITIONAL
	Description string
	Masking     bool
}

// Identifier is a dataset identifier from symlinks or lifecycle facets.
type Identifier struct {
	Namespace string
	Name      string
	Type      string
}

// Lifecycle is the lifecycleStateChange facet.
type Lifecycle struct {
	State              string // CREATE, DROP, OVERWRITE, TRUNCATE, RENAME, ALTER
	PreviousIdentifier *Identifier
}

// Publication is Headwater's own headwater_publication output facet.
type Publication struct {
	State  string // PUBLISHED or WITHHELD
	Reason string
}

// Owner is one ownership entry.
type Owner struct {
	Name string
	Type string
}

// Tag is one tag entry (tags facet).
type Tag struct {
	Key    string
	Value  string
	Source string
	Field  string // set when the tag applies to a field
}

// Name renders the tag as Dataset.tags and the tag history do: `[field:]key[=value]` (the projector's rendering,
// which the governance mutations and the catalog sync compare against).
func (t Tag) Name() string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	if t.Field != "" {
		s = t.Field + ":" + s
	}
	return s
}

// Block is one explicit block of the headwater_governance_block facet (ADR 0067): propagation stops at Field
// (of the event's dataset), or, with Edge, only across the column edge into Field from Edge's upstream field
// through Edge's job. By and Reason are who asked and why.
type Block struct {
	Field  string
	Edge   *BlockEdge
	By     string
	Reason string
}

// BlockEdge is the column edge a block names: the job and the upstream field.
type BlockEdge struct {
	JobNamespace, JobName string
	From                  InputField // Namespace, Name, Field only
}

// LineageFacet is the OpenLineage `lineage` facet: declared lineage, possibly without a job.
type LineageFacet struct {
	Inputs []Identifier // upstream datasets of the dataset carrying the facet
	Fields map[string][]InputField

	// AllInputs keeps every dataset-level input with its type (DATASET or JOB), field and transformations;
	// Inputs above holds only the DATASET ones as identifiers (Type "DATASET").
	AllInputs []LineageInput
}
