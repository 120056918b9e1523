package graph

import "sort"

// The rows of the lineage walk's hop reads (graph/hopread) and the identity helpers the reads share: the
// vocabulary the walk, its caches and the permission check name.

// HopQuery asks for the lineage neighbours of a whole frontier in one read.
type HopQuery struct {
	Keys []string // frontier node keys (all of one kind)
	Down bool     // true: downstream (what the nodes feed); false: upstream
	AsOf int64    // epoch ms: an interval i counts when froms[i] <= AsOf < tos[i]
	Pubs []string // publication states that count (PUBLISHED; plus ATTEMPTED, PENDING with includeAttempted)
	// Limit, when positive, keeps per frontier node only the first Limit neighbours in key order (with every
	// relationship to them): the rest of a hub's neighbours are never projected. Dataset hops only.
	Limit int
}

// Rel is a temporal lineage relationship as stored (see docs/graph-model.md).
type Rel struct {
	Kind            string   `json:"k"`
	Froms           []int64  `json:"f"`
	Tos             []int64  `json:"t"`
	Pubs            []string `json:"p"`
	FirstObservedAt int64    `json:"fo,omitempty"`
	LastObservedAt  int64    `json:"lo,omitempty"`
	Producer        string   `json:"pr,omitempty"`
	EventIDs        []string `json:"e,omitempty"`
	JobVersion      string   `json:"jv,omitempty"`
	LastRunID       string   `json:"ri,omitempty"`
	LastRunState    string   `json:"rs,omitempty"`
	Derivation      string   `json:"d,omitempty"`
	// Column lineage only.
	JobKey        string   `json:"jk,omitempty"`
	TTypes        []string `json:"tt,omitempty"`
	TSubtypes     []string `json:"ts,omitempty"`
	TMasking      []bool   `json:"tm,omitempty"`
	TDescriptions []string `json:"td,omitempty"`
	// THistory is the transformation history of a column edge whose runs did not all report the same kinds
	// (stored as ColumnTransformHistoryProp; nil when they did): read them with TransformationsAt.
	THistory []TransformationsFrom `json:"th,omitempty"`
}

// ColumnTransformHistoryProp is the COLUMN_FEEDS property holding its transformation history (JSON of
// []TransformationsFrom), present only when the kinds changed (projection version 10, ADR 0091).
const ColumnTransformHistoryProp = "tHistory"

// TransformationsFrom is what a column edge's runs reported from At (epoch ms: the first listing of the stretch)
// until the next entry: the transformations of the stretch's latest run listing the mapping.
type TransformationsFrom struct {
	At           int64    `json:"a"`
	Types        []string `json:"tt,omitempty"`
	Subtypes     []string `json:"ts,omitempty"`
	Masking      []bool   `json:"tm,omitempty"`
	Descriptions []string `json:"td,omitempty"`
}

// TransformationsAt are the transformations of the column edge in force at t (epoch ms): those of the latest
// history entry starting at or before t (the first entry when t precedes them all), or, without a history, the
// latest run's.
func (r *Rel) TransformationsAt(t int64) (types, subtypes []string, masking []bool, descriptions []string) {
	if len(r.THistory) == 0 {
		return r.TTypes, r.TSubtypes, r.TMasking, r.TDescriptions
	}
	i := max(sort.Search(len(r.THistory), func(i int) bool { return r.THistory[i].At > t })-1, 0)
	h := r.THistory[i]
	return h.Types, h.Subtypes, h.Masking, h.Descriptions
}

// NameRef is a dataset identity (the one valid at the hop's AsOf).
type NameRef struct {
	Namespace string `json:"ns"`
	Name      string `json:"n"`
	Env       string `json:"env,omitempty"`
}

// JobBrief is what a hop needs to know of the job between two datasets.
type JobBrief struct {
	Key         string `json:"key"`
	Namespace   string `json:"ns"`
	Name        string `json:"n"`
	FirstSeenAt int64  `json:"fs,omitempty"`
	LastSeenAt  int64  `json:"ls,omitempty"`
	Runs        int64  `json:"r,omitempty"`
}

// HopRow is one (source, neighbour, job) relationship pair found by a hop. For a dataset hop through a job,
// In is the INPUT_TO leg and Out the OUTPUT_TO leg whatever the direction; for DECLARED_FEEDS Job and In are nil
// and Out holds the relationship. For a job as start node only the leg touching the job is set. For a field hop
// Out holds the COLUMN_FEEDS relationship.
type HopRow struct {
	Src     string    `json:"s"`
	Dst     string    `json:"d"`
	Job     *JobBrief `json:"j,omitempty"`
	In      *Rel      `json:"in,omitempty"`
	Out     *Rel      `json:"out,omitempty"`
	DstName NameRef   `json:"dn"`
	// DstCurrent is the neighbour's current identity (for a field, its dataset's): permissions are checked under
	// it and under DstName when they differ.
	DstCurrent NameRef `json:"dc"`
	// Field hops only: the neighbour field's dataset and path.
	DstDataset string `json:"dd,omitempty"`
	DstPath    string `json:"dp,omitempty"`
}

// FieldHopResult is one field-level hop: the column edges found, and for every frontier field whose dataset has
// dataset-level lineage this way, the datasets at the other end. The caller decides whether column lineage is
// missing from what it may see (no visible column edge, a visible far dataset): whether a field has column edges
// at all is not the question, since they may all lead to fields the caller may not see.
type FieldHopResult struct {
	Rows []HopRow
	// Far names, per frontier field key whose dataset has dataset-level lineage this way, the datasets (current
	// identity, at most MaxFarDatasets) at its other end.
	Far map[string][]NameRef
}

// NameAtCypher is a pattern comprehension giving the identity of dataset variable v valid at $t. A dataset with one
// name (its NAMES degree, read from the degree store in constant time) is named at $t as it is now, so the
// lookup runs only for renamed or aliased datasets: a hub's neighbours mostly cost a property read.
func NameAtCypher(v string) string {
	return `CASE WHEN COUNT { (` + v + `)<-[:NAMES]-() } > 1 THEN coalesce([(nmAt:DatasetName)-[rAt:NAMES]->(` + v + `) WHERE rAt.kind IN ['PRIMARY','RENAMED'] AND rAt.validFrom <= $t AND $t < rAt.validTo | nmAt{.namespace, .name, .env}][0], ` + v + `{.namespace, .name, .env}) ELSE ` + v + `{.namespace, .name, .env} END`
}

// NameRefOf reads a NameRef from a projected {namespace, name, env} map.
func NameRefOf(p Props) NameRef {
	return NameRef{Namespace: p.Str("namespace"), Name: p.Str("name"), Env: p.Str("env")}
}
