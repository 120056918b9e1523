// Package declare turns declared lineage that teams keep outside OpenLineage into OpenLineage JobEvents and sends
// them through the event gateway's own path (validation, produce check, quarantine, event ids, Kafka,
// projection), so a declaration is permitted, refused, deduplicated and projected exactly as the same events
// sent by a producer would be (docs/declared-lineage.md, ADR 0044). The first source is a dbt
// `target/manifest.json` (read by inventory/dbtmanifest).
//
// Invariants: the events are a pure function of the manifest and the two namespaces (the same manifest gives the
// same events, hence the same content ids: a re-import is a duplicate and changes nothing); each event's time is
// the manifest's generated_at, so a later manifest's declarations supersede an earlier one's (a dependency it no
// longer lists closes); a declaration is all or nothing.
package declare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

// Producer is the OpenLineage producer of every declared event (and the _producer of its facets).
const Producer = "https://github.com/headwater-data/headwater/declare/dbt"

// FacetDeclaredColumns is Headwater's dataset facet carrying a dbt node's declared columns (name, type,
// description). It is not the OpenLineage schema facet on purpose: a manifest lists the documented columns only,
// and a schema facet states the full schema (projection closes every field it omits), so it would close columns
// the runs observed (ADR 0044).
const FacetDeclaredColumns = "headwater_declaredColumns"

// FacetExposure is Headwater's dataset facet on a dbt exposure's consumer dataset: its type (dashboard,
// notebook, analysis, ml, application), label, url, maturity and owner as declared (ADR 0070).
const FacetExposure = "headwater_exposure"

// ExposureJobType is the jobType of an exposure's job. It is no dbt node job type (ingest/project keys MODEL,
// SEED, SNAPSHOT and TEST jobs by unique_id): an exposure's job keeps its (namespace, name) identity, its name
// being the exposure's unique_id.
const ExposureJobType = "EXPOSURE"

// MaxDeclaredNodes bounds the models, seeds and snapshots of one declaration (one event each).
const MaxDeclaredNodes = 20_000

const (
	jobEventSchemaURL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
	jobTypeSchemaURL  = "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"
	dbtNodeSchemaURL  = "https://github.com/OpenLineage/OpenLineage/tree/main/integration/common/openlineage/schema/dbt-node-job-facet.json"
	sqlSchemaURL      = "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet"
	columnsSchemaURL  = "https://github.com/headwater-data/headwater/blob/main/docs/declared-lineage.md#declared-columns"
	exposureSchemaURL = "https://github.com/headwater-data/headwater/blob/main/docs/declared-lineage.md#exposures"
	ownershipURL      = "https://openlineage.io/spec/facets/1-0-1/OwnershipDatasetFacet.json#/$defs/OwnershipDatasetFacet"
	jobOwnershipURL   = "https://openlineage.io/spec/facets/1-0-1/OwnershipJobFacet.json#/$defs/OwnershipJobFacet"
	documentationURL  = "https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json#/$defs/DocumentationDatasetFacet"
	tagsURL           = "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json#/$defs/TagsDatasetFacet"
)

// Tag sources of the declared tags facet, as openlineage-dbt names them in its run tags facet: a dbt tag, a dbt
// meta entry (ADR 0071).
const (
	TagSourceDbt     = "DBT"
	TagSourceDbtMeta = "DBT_META"
)

// Options say what the manifest does not: where dbt-ol reports the project's jobs and datasets.
type Options struct {
	// JobNamespace is dbt-ol's OPENLINEAGE_NAMESPACE (required).
	JobNamespace string
	// DatasetNamespace is the adapter's OpenLineage namespace (duckdb://<path>, postgres://host:port, ...; required).
	DatasetNamespace string
}

// Summary counts what a manifest declares.
type Summary struct {
	Jobs      int `json:"jobs"`
	Models    int `json:"models"`
	Seeds     int `json:"seeds"`
	Snapshots int `json:"snapshots"`
	// Exposures counts the enabled exposures (one job and one consumer dataset each, ADR 0070).
	Exposures int `json:"exposures"`
	// Sources counts the enabled sources (datasets only: sent as the inputs that name them).
	Sources int `json:"sources"`
	// Edges counts the declared job-dataset edges (inputs and outputs).
	Edges int `json:"edges"`
	// WithoutSQL are the unique ids of the jobs the manifest has no compiled_code for (a manifest written by
	// `dbt parse`; compile, run and build write it), sorted.
	WithoutSQL []string `json:"withoutSql,omitempty"`
	// Withdrawn are the unique ids of the nodes the project's current declarations have and the manifest does not:
	// a withdrawal was sent for each (a declaration of nothing, closing its declared edges), sorted.
	Withdrawn []string `json:"withdrawn,omitempty"`
	// Unresolved are the dependencies that name no node or source of the manifest, or one without a relation
	// (ephemeral models are followed to their own dependencies instead), sorted.
	Unresolved []string `json:"unresolved,omitempty"`
}

// Events returns one JobEvent per enabled model, seed and snapshot of m: the node's job (named as dbt-ol names it,
// with the dbt_node facet, so it lands on the job dbt-ol's runs report, ADR 0027), its relation as the output,
// the relations of its depends_on as inputs, its compiled SQL and declared columns. Sources are datasets only:
// they appear as the inputs of the nodes that depend on them.
func Events(m *dbtmanifest.Manifest, o Options) ([][]byte, Summary, error) {
	var sum Summary
	if strings.TrimSpace(o.JobNamespace) == "" {
		return nil, sum, fmt.Errorf("jobNamespace: required (dbt-ol's OPENLINEAGE_NAMESPACE)")
	}
	if strings.TrimSpace(o.DatasetNamespace) == "" {
		return nil, sum, fmt.Errorf("datasetNamespace: required (the adapter's OpenLineage namespace, e.g. duckdb://<path>)")
	}
	at, err := eventTime(m.GeneratedAt)
	if err != nil {
		return nil, sum, err
	}
	byID := map[string]dbtmanifest.Node{}
	for _, n := range append(slices.Clone(m.Nodes), m.Sources...) {
		byID[n.UniqueID] = n
	}
	for _, s := range m.Sources {
		if s.Enabled {
			sum.Sources++
		}
	}
	unresolved := map[string]bool{}
	var out [][]byte
	for _, n := range m.Nodes {
		jobName, jobType, ok := jobOf(n)
		if !ok || !n.Enabled || n.TableName() == "" || n.Materialized == "ephemeral" {
			continue
		}
		if len(out) == MaxDeclaredNodes {
			return nil, sum, fmt.Errorf("nodes: at most %d models, seeds and snapshots per declaration", MaxDeclaredNodes)
		}
		inputs := inputsOf(n, byID, unresolved)
		ev := jobEvent(n, jobName, jobType, at, inputs, o, m.AdapterType)
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, sum, fmt.Errorf("nodes[%s]: %w", n.UniqueID, err)
		}
		out = append(out, b)
		sum.Jobs++
		sum.Edges += len(inputs) + 1
		switch n.ResourceType {
		case dbtmanifest.TypeModel:
			sum.Models++
		case dbtmanifest.TypeSeed:
			sum.Seeds++
		case dbtmanifest.TypeSnapshot:
			sum.Snapshots++
		}
		if n.CompiledCode == "" && n.ResourceType != dbtmanifest.TypeSeed {
			sum.WithoutSQL = append(sum.WithoutSQL, n.UniqueID)
		}
	}
	for _, e := range m.Exposures {
		if !e.Enabled {
			continue
		}
		if len(out) == MaxDeclaredNodes {
			return nil, sum, fmt.Errorf("nodes: at most %d models, seeds, snapshots and exposures per declaration", MaxDeclaredNodes)
		}
		inputs := inputsOf(dbtmanifest.Node{UniqueID: e.UniqueID, DependsOn: e.DependsOn}, byID, unresolved)
		b, err := json.Marshal(exposureEvent(e, at, inputs, o))
		if err != nil {
			return nil, sum, fmt.Errorf("exposures[%s]: %w", e.UniqueID, err)
		}
		out = append(out, b)
		sum.Jobs++
		sum.Exposures++
		sum.Edges += len(inputs) + 1
	}
	for k := range unresolved {
		sum.Unresolved = append(sum.Unresolved, k)
	}
	slices.Sort(sum.Unresolved)
	return out, sum, nil
}

// eventTime is the manifest's generated_at as the events' time (UTC, microseconds as dbt writes it).
func eventTime(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("metadata.generated_at: required (the time the declarations are made at)")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", fmt.Errorf("metadata.generated_at: not an RFC 3339 time (%q)", s)
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z"), nil
}

// jobOf names the node's job as dbt-ol does (ADR 0027's table): a model `<db>.<schema>.<unique_id without
// "model.">` (its `dbt-ol run` name), a snapshot the same plus `.snapshot`, a seed its unique_id (dbt-ol reports
// seeds only with structured logs, under their unique_id). The dbt_node facet keys the job by unique_id anyway:
// the name is one more of its names.
func jobOf(n dbtmanifest.Node) (name, jobType string, ok bool) {
	switch n.ResourceType {
	case dbtmanifest.TypeModel:
		return n.JobBase(), "MODEL", true
	case dbtmanifest.TypeSnapshot:
		return n.JobBase() + ".snapshot", "SNAPSHOT", true
	case dbtmanifest.TypeSeed:
		return n.UniqueID, "SEED", true
	}
	return "", "", false
}

// inputsOf returns the relations the node depends on, following ephemeral models (no relation of their own) to
// their dependencies; names of nothing the manifest has go to unresolved.
func inputsOf(n dbtmanifest.Node, byID map[string]dbtmanifest.Node, unresolved map[string]bool) []string {
	seen, names := map[string]bool{}, map[string]bool{}
	var walk func(ids []string)
	walk = func(ids []string) {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			d, ok := byID[id]
			switch {
			case !ok:
				unresolved[id] = true
			case d.ResourceType == dbtmanifest.TypeModel && d.Materialized == "ephemeral":
				walk(d.DependsOn)
			case d.TableName() == "":
				unresolved[id] = true
			default:
				names[d.TableName()] = true
			}
		}
	}
	walk(n.DependsOn)
	delete(names, n.TableName())
	out := make([]string, 0, len(names))
	for k := range names {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type facetBase struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

type datasetRef struct {
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Facets    map[string]any `json:"facets,omitempty"`
}

type declaredColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

func jobEvent(n dbtmanifest.Node, name, jobType, at string, inputs []string, o Options, adapter string) map[string]any {
	facets := dbtJobFacets(jobType, n.UniqueID)
	if n.CompiledCode != "" {
		facets[olevent.FacetSQL] = struct {
			facetBase
			Query   string `json:"query"`
			Dialect string `json:"dialect,omitempty"`
		}{facetBase{Producer, sqlSchemaURL}, n.CompiledCode, adapter}
	}
	out := datasetRef{Namespace: o.DatasetNamespace, Name: n.TableName(), Facets: map[string]any{}}
	if tags := tagsOf(n); len(tags) > 0 {
		out.Facets[olevent.FacetTags] = struct {
			facetBase
			Tags []tagEntry `json:"tags"`
		}{facetBase{Producer, tagsURL}, tags}
	}
	if len(n.Columns) > 0 {
		cols := make([]declaredColumn, 0, len(n.Columns))
		for _, c := range n.Columns {
			cols = append(cols, declaredColumn{Name: c.Name, Type: c.DataType, Description: c.Description})
		}
		out.Facets[FacetDeclaredColumns] = struct {
			facetBase
			Columns []declaredColumn `json:"columns"`
		}{facetBase{Producer, columnsSchemaURL}, cols}
	}
	if len(out.Facets) == 0 {
		out.Facets = nil
	}
	ins := make([]datasetRef, 0, len(inputs))
	for _, in := range inputs {
		ins = append(ins, datasetRef{Namespace: o.DatasetNamespace, Name: in})
	}
	return map[string]any{
		"eventTime": at,
		"producer":  Producer,
		"schemaURL": jobEventSchemaURL,
		"job":       map[string]any{"namespace": o.JobNamespace, "name": name, "facets": facets},
		"inputs":    ins,
		"outputs":   []datasetRef{out},
	}
}

// ExposureOwner is the owner an exposure's consumer dataset is declared with: the owner's email, else its name.
func ExposureOwner(e dbtmanifest.Exposure) string {
	if e.OwnerEmail != "" {
		return e.OwnerEmail
	}
	return e.OwnerName
}

type exposureFacet struct {
	facetBase
	Type       string `json:"type,omitempty"`
	Label      string `json:"label,omitempty"`
	URL        string `json:"url,omitempty"`
	Maturity   string `json:"maturity,omitempty"`
	OwnerName  string `json:"ownerName,omitempty"`
	OwnerEmail string `json:"ownerEmail,omitempty"`
}

type ownerEntry struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// exposureEvent is an exposure's JobEvent (ADR 0070): a job named by the exposure's unique_id in the job
// namespace, reading the relations it depends on and writing its consumer dataset (the same name, in the job
// namespace), which carries the owner (ownership facet), the description and the exposure facet.
func exposureEvent(e dbtmanifest.Exposure, at string, inputs []string, o Options) map[string]any {
	jobFacets := map[string]any{
		olevent.FacetJobType: struct {
			facetBase
			ProcessingType string `json:"processingType"`
			Integration    string `json:"integration"`
			JobType        string `json:"jobType"`
		}{facetBase{Producer, jobTypeSchemaURL}, "BATCH", "DBT", ExposureJobType},
	}
	dsFacets := map[string]any{FacetExposure: exposureFacet{facetBase{Producer, exposureSchemaURL}, e.Type, e.Label, e.URL,
		e.Maturity, e.OwnerName, e.OwnerEmail}}
	if owner := ExposureOwner(e); owner != "" {
		owners := []ownerEntry{{Name: owner, Type: "dbt exposure owner"}}
		dsFacets[olevent.FacetOwnership] = struct {
			facetBase
			Owners []ownerEntry `json:"owners"`
		}{facetBase{Producer, ownershipURL}, owners}
		jobFacets[olevent.FacetOwnership] = struct {
			facetBase
			Owners []ownerEntry `json:"owners"`
		}{facetBase{Producer, jobOwnershipURL}, owners}
	}
	if e.Description != "" {
		dsFacets[olevent.FacetDocumentation] = struct {
			facetBase
			Description string `json:"description"`
		}{facetBase{Producer, documentationURL}, e.Description}
	}
	ins := make([]datasetRef, 0, len(inputs))
	for _, in := range inputs {
		ins = append(ins, datasetRef{Namespace: o.DatasetNamespace, Name: in})
	}
	return map[string]any{
		"eventTime": at,
		"producer":  Producer,
		"schemaURL": jobEventSchemaURL,
		"job":       map[string]any{"namespace": o.JobNamespace, "name": e.UniqueID, "facets": jobFacets},
		"inputs":    ins,
		"outputs":   []datasetRef{{Namespace: o.JobNamespace, Name: e.UniqueID, Facets: dsFacets}},
	}
}

type tagEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
	Field  string `json:"field,omitempty"`
}

// tagsOf is the node's dbt tags and meta as the dataset tags facet governance reads (docs/governance.md "How tags
// get in", ADR 0071), rendered as openlineage-dbt renders them in its run tags facet: a tag is key = the tag, value
// "true", source DBT; a meta entry is key = the meta key, value its value (booleans true/false, other scalars as
// text, structures as JSON), source DBT_META. A column's tags and meta carry the column as the field. Headwater's
// own meta key (MetaRenamedFrom) is not a tag. Sorted: the node's, then each column's (by name), tags before meta,
// meta by key.
func tagsOf(n dbtmanifest.Node) []tagEntry {
	var out []tagEntry
	add := func(field string, tags []string, meta map[string]any) {
		for _, t := range tags {
			out = append(out, tagEntry{Key: t, Value: "true", Source: TagSourceDbt, Field: field})
		}
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			if k != MetaRenamedFrom {
				out = append(out, tagEntry{Key: k, Value: metaValue(meta[k]), Source: TagSourceDbtMeta, Field: field})
			}
		}
	}
	add("", n.Tags, n.Meta)
	for _, c := range n.Columns {
		add(c.Name, c.Tags, c.Meta)
	}
	return out
}

func metaValue(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Withdrawals returns, for each node of the current declarations that the manifest does not have (by unique id),
// a JobEvent at the manifest's time declaring nothing, on the node's job (named by its current name, with the
// dbt_node facet, so it lands on that job): projection closes every declared edge a declaration omits (ADR 0044),
// so the removed node's declared edges close at the manifest's time. None when the current declarations are not
// older than the manifest (an older manifest imported late withdraws nothing). Sorted by unique id.
func Withdrawals(m *dbtmanifest.Manifest, cur Current, o Options) ([][]byte, []string, error) {
	at, err := eventTime(m.GeneratedAt)
	if err != nil {
		return nil, nil, err
	}
	t, _ := time.Parse(time.RFC3339Nano, at)
	if cur.At.IsZero() || !cur.At.Before(t) {
		return nil, nil, nil
	}
	have := map[string]bool{}
	for _, n := range m.Nodes {
		if _, _, ok := jobOf(n); ok && n.Enabled && n.TableName() != "" && n.Materialized != "ephemeral" {
			have[n.UniqueID] = true
		}
	}
	var out [][]byte
	var ids []string
	for _, n := range cur.Nodes {
		kind, _, _ := strings.Cut(n.UniqueID, ".")
		jobType := map[string]string{dbtmanifest.TypeModel: "MODEL", dbtmanifest.TypeSeed: "SEED", dbtmanifest.TypeSnapshot: "SNAPSHOT"}[kind]
		if have[n.UniqueID] || jobType == "" || n.JobName == "" {
			continue
		}
		facets := dbtJobFacets(jobType, n.UniqueID)
		b, err := json.Marshal(map[string]any{"eventTime": at, "producer": Producer, "schemaURL": jobEventSchemaURL,
			"job":    map[string]any{"namespace": o.JobNamespace, "name": n.JobName, "facets": facets},
			"inputs": []datasetRef{}, "outputs": []datasetRef{}})
		if err != nil {
			return nil, nil, err
		}
		out = append(out, b)
		ids = append(ids, n.UniqueID)
	}
	return out, ids, nil
}

// dbtJobFacets are the jobType and dbt_node facets every declared dbt job carries (the import's and the
// withdrawal's JobEvents alike).
func dbtJobFacets(jobType, uniqueID string) map[string]any {
	return map[string]any{
		olevent.FacetJobType: struct {
			facetBase
			ProcessingType string `json:"processingType"`
			Integration    string `json:"integration"`
			JobType        string `json:"jobType"`
		}{facetBase{Producer, jobTypeSchemaURL}, "BATCH", "DBT", jobType},
		olevent.FacetDbtNode: struct {
			facetBase
			UniqueID string `json:"unique_id"`
		}{facetBase{Producer, dbtNodeSchemaURL}, uniqueID},
	}
}
