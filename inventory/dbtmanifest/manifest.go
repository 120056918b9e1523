// Package dbtmanifest reads a dbt `target/manifest.json`: its models, snapshots, seeds, tests, sources and
// exposures with their unique_id, depends_on, relation_name, tags and meta. It is pure and reads the manifest
// once; Expected turns it into the expected-job inventory (docs/trust.md), and the declared-lineage work reuses
// Read and the dependency graph.
//
// Naming follows openlineage-dbt (dbt-ol) 1.54 exactly, so expected jobs match the jobs its events report: a
// model's job is `<database>.<schema>.<unique_id without "model.">` under `dbt-ol run` and the same plus
// `.build.run` under `dbt-ol build`; a snapshot's ends in `.snapshot` / `.build.snapshot`; the tests of a model
// are reported as one job `<model job>.test` / `.build.test`, or, per test, as a job named by the test's
// unique_id. Datasets are `<database>.<schema>.<alias>` in the adapter's namespace. With the dbt_node facet,
// a job also carries the node's unique_id and a role (ADR 0027): NODE for the node's own job, TESTS for the
// job of a node's generic tests; Expected lists both rules for each expected job.
package dbtmanifest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Resource types read from the manifest.
const (
	TypeModel    = "model"
	TypeSnapshot = "snapshot"
	TypeSeed     = "seed"
	TypeTest     = "test"
	TypeSource   = "source"
	TypeExposure = "exposure"
)

// Exposure is one manifest exposure: a downstream consumer (dashboard, notebook, analysis, ml, application) of
// the nodes it depends on.
type Exposure struct {
	UniqueID, Name, Label, Type, URL, Maturity, Description string
	// OwnerName and OwnerEmail are its owner as declared (either may be "").
	OwnerName, OwnerEmail string
	Enabled               bool
	// DependsOn are the unique ids of the nodes and sources it depends on, sorted.
	DependsOn []string
	Tags      []string
	Meta      map[string]any
}

// Node is one manifest node (or source).
type Node struct {
	UniqueID     string
	ResourceType string
	Name         string
	Package      string
	Database     string
	Schema       string
	Alias        string
	RelationName string
	Materialized string
	Enabled      bool
	// DependsOn are the unique ids of the nodes and sources it depends on, sorted.
	DependsOn []string
	// AttachedNode is the model a test tests (tests only).
	AttachedNode string
	// TestName is a generic test's test_metadata.name (not_null, unique, ...; "" for a singular test) and
	// ColumnName the column it tests (tests only): what dbt-ol reports as the assertion and its column.
	TestName, ColumnName string
	// Tags are the node's and its config's tags, sorted and distinct.
	Tags []string
	// Meta is the node's meta merged over its config's meta.
	Meta map[string]any
	// Columns are the node's declared columns (schema.yml, or the catalog for sources), sorted by name.
	Columns []Column
	// CompiledCode is the node's compiled SQL; dbt writes it only after compile, run or build ("" after parse).
	CompiledCode string
}

// Column is one declared column of a node.
type Column struct {
	Name, DataType, Description string
	// Tags (sorted, distinct) and Meta are the column's own (and its config's, dbt 1.10 and later).
	Tags []string
	Meta map[string]any
}

// Manifest is what Read keeps of a manifest.
type Manifest struct {
	SchemaVersion string
	ProjectName   string
	AdapterType   string
	// GeneratedAt is metadata.generated_at as written (RFC 3339): when dbt wrote the manifest (else
	// metadata.invocation_started_at).
	GeneratedAt string
	// Nodes are the models, snapshots, seeds and tests, sorted by unique id; Sources likewise.
	Nodes   []Node
	Sources []Node
	// Exposures are the manifest's exposures, sorted by unique id.
	Exposures []Exposure
}

// wire is the manifest's JSON, reduced to what Read keeps (the decoder skips the rest).
type wire struct {
	Metadata struct {
		SchemaVersion string `json:"dbt_schema_version"`
		ProjectName   string `json:"project_name"`
		AdapterType   string `json:"adapter_type"`
		GeneratedAt   string `json:"generated_at"`
		InvocationAt  string `json:"invocation_started_at"`
	} `json:"metadata"`
	Nodes     map[string]wireNode     `json:"nodes"`
	Sources   map[string]wireNode     `json:"sources"`
	Exposures map[string]wireExposure `json:"exposures"`
}

type wireExposure struct {
	UniqueID    string         `json:"unique_id"`
	Name        string         `json:"name"`
	Label       *string        `json:"label"`
	Type        string         `json:"type"`
	URL         *string        `json:"url"`
	Maturity    *string        `json:"maturity"`
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Meta        map[string]any `json:"meta"`
	Owner       struct {
		Name  *string `json:"name"`
		Email any     `json:"email"` // a string, or a list (dbt 1.10)
	} `json:"owner"`
	DependsOn struct {
		Nodes []string `json:"nodes"`
	} `json:"depends_on"`
	Config struct {
		Enabled *bool          `json:"enabled"`
		Meta    map[string]any `json:"meta"`
	} `json:"config"`
}

func (e wireExposure) exposure(id string) Exposure {
	out := Exposure{UniqueID: e.UniqueID, Name: e.Name, Label: deref(e.Label), Type: e.Type, URL: deref(e.URL),
		Maturity: deref(e.Maturity), Description: e.Description, OwnerName: deref(e.Owner.Name),
		OwnerEmail: strings.Join(tagList(e.Owner.Email), ", "), Enabled: e.Config.Enabled == nil || *e.Config.Enabled,
		DependsOn: sortedSet(e.DependsOn.Nodes), Tags: sortedSet(e.Tags), Meta: map[string]any{}}
	if out.UniqueID == "" {
		out.UniqueID = id
	}
	maps.Copy(out.Meta, e.Config.Meta)
	maps.Copy(out.Meta, e.Meta)
	return out
}

type wireNode struct {
	UniqueID     string         `json:"unique_id"`
	ResourceType string         `json:"resource_type"`
	Name         string         `json:"name"`
	Package      string         `json:"package_name"`
	Database     *string        `json:"database"`
	Schema       string         `json:"schema"`
	Alias        string         `json:"alias"`
	Identifier   string         `json:"identifier"` // sources
	RelationName *string        `json:"relation_name"`
	Tags         []string       `json:"tags"`
	Meta         map[string]any `json:"meta"`
	AttachedNode *string        `json:"attached_node"`
	ColumnName   *string        `json:"column_name"`
	TestMetadata *struct {
		Name string `json:"name"`
	} `json:"test_metadata"`
	CompiledCode *string `json:"compiled_code"`
	Columns      map[string]struct {
		Name        string         `json:"name"`
		DataType    *string        `json:"data_type"`
		Description string         `json:"description"`
		Tags        []string       `json:"tags"`
		Meta        map[string]any `json:"meta"`
		Config      struct {
			Tags any            `json:"tags"` // a string or a list
			Meta map[string]any `json:"meta"`
		} `json:"config"` // dbt 1.10 and later
	} `json:"columns"`
	DependsOn struct {
		Nodes []string `json:"nodes"`
	} `json:"depends_on"`
	Config struct {
		Enabled      *bool          `json:"enabled"`
		Materialized string         `json:"materialized"`
		Tags         any            `json:"tags"` // a string or a list
		Meta         map[string]any `json:"meta"`
	} `json:"config"`
}

// Read decodes a manifest. It refuses a document that is not a dbt manifest (no metadata.dbt_schema_version).
func Read(r io.Reader) (*Manifest, error) {
	var w wire
	if err := json.NewDecoder(r).Decode(&w); err != nil {
		return nil, fmt.Errorf("manifest: not a JSON document: %w", err)
	}
	if !strings.Contains(w.Metadata.SchemaVersion, "schemas.getdbt.com/dbt/manifest") {
		return nil, fmt.Errorf("manifest: metadata.dbt_schema_version: not a dbt manifest (got %q)", w.Metadata.SchemaVersion)
	}
	m := &Manifest{SchemaVersion: w.Metadata.SchemaVersion, ProjectName: w.Metadata.ProjectName,
		AdapterType: w.Metadata.AdapterType, GeneratedAt: w.Metadata.GeneratedAt}
	if m.GeneratedAt == "" {
		m.GeneratedAt = w.Metadata.InvocationAt
	}
	for id, n := range w.Nodes {
		switch n.ResourceType {
		case TypeModel, TypeSnapshot, TypeSeed, TypeTest:
			m.Nodes = append(m.Nodes, n.node(id))
		}
	}
	for id, n := range w.Sources {
		m.Sources = append(m.Sources, n.node(id))
	}
	for id, e := range w.Exposures {
		m.Exposures = append(m.Exposures, e.exposure(id))
	}
	slices.SortFunc(m.Exposures, func(a, b Exposure) int { return strings.Compare(a.UniqueID, b.UniqueID) })
	byID := func(a, b Node) int { return strings.Compare(a.UniqueID, b.UniqueID) }
	slices.SortFunc(m.Nodes, byID)
	slices.SortFunc(m.Sources, byID)
	return m, nil
}

func (n wireNode) node(id string) Node {
	out := Node{UniqueID: n.UniqueID, ResourceType: n.ResourceType, Name: n.Name, Package: n.Package,
		Database: deref(n.Database), Schema: n.Schema, Alias: n.Alias, RelationName: deref(n.RelationName),
		Materialized: n.Config.Materialized, Enabled: n.Config.Enabled == nil || *n.Config.Enabled,
		AttachedNode: deref(n.AttachedNode), ColumnName: deref(n.ColumnName), Meta: map[string]any{}, CompiledCode: deref(n.CompiledCode)}
	if n.TestMetadata != nil {
		out.TestName = n.TestMetadata.Name
	}
	if out.UniqueID == "" {
		out.UniqueID = id
	}
	if out.Alias == "" {
		out.Alias = n.Identifier
	}
	if out.Alias == "" {
		out.Alias = n.Name
	}
	out.DependsOn = sortedSet(n.DependsOn.Nodes)
	out.Tags = sortedSet(append(slices.Clone(n.Tags), tagList(n.Config.Tags)...))
	maps.Copy(out.Meta, n.Config.Meta)
	maps.Copy(out.Meta, n.Meta)
	for key, c := range n.Columns {
		name := c.Name
		if name == "" {
			name = key
		}
		col := Column{Name: name, DataType: deref(c.DataType), Description: c.Description,
			Tags: sortedSet(append(slices.Clone(c.Tags), tagList(c.Config.Tags)...))}
		if len(c.Meta)+len(c.Config.Meta) > 0 {
			col.Meta = map[string]any{}
			maps.Copy(col.Meta, c.Config.Meta)
			maps.Copy(col.Meta, c.Meta)
		}
		out.Columns = append(out.Columns, col)
	}
	slices.SortFunc(out.Columns, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func tagList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func sortedSet(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TableName is the dataset name dbt-ol reports for the node: its relation_name's parts without quotes, else
// database.schema.alias (empty parts left out).
func (n Node) TableName() string {
	if parts := splitRelation(n.RelationName); len(parts) > 0 {
		return strings.Join(parts, ".")
	}
	return joinNonEmpty(n.Database, n.Schema, n.Alias)
}

// splitRelation splits `"db"."schema"."table"` (or backtick- or unquoted parts) on dots outside quotes.
func splitRelation(rel string) []string {
	var parts []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range rel {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '`' || r == '['):
			quote = r
			if r == '[' {
				quote = ']'
			}
		case quote == 0 && r == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 || len(parts) > 0 {
		parts = append(parts, cur.String())
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// JobBase is dbt-ol's job name of a model or snapshot without the command suffix:
// `<database>.<schema>.<unique_id without its resource-type prefix>`.
func (n Node) JobBase() string {
	return joinNonEmpty(n.Database, n.Schema, strings.TrimPrefix(n.UniqueID, n.ResourceType+"."))
}
