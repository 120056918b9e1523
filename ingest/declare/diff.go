package declare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

// MetaRenamedFrom is the candidate node's meta key naming the unique_id it was renamed from
// (`meta: {headwater_renamed_from: model.shop.old_name}`). A rename is only ever taken from this key or from the
// request's renamed parameter, never guessed from similarity (ADR 0056).
const MetaRenamedFrom = "headwater_renamed_from"

// DeclaredColumn is one declared column of a node (its type as declared, "" when none).
type DeclaredColumn struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// DeclaredNode is one model, seed or snapshot as declared: the relation it writes, the relations it reads, its
// declared columns. Both sides of a diff are in this form: the candidate from its manifest (FromManifest), the
// current declarations from the graph (CurrentReader).
type DeclaredNode struct {
	UniqueID string `json:"uniqueId"`
	Dataset  string `json:"dataset"`
	// Inputs are the relations it depends on (ephemeral models followed through), sorted.
	Inputs  []string         `json:"inputs,omitempty"`
	Columns []DeclaredColumn `json:"columns,omitempty"`
	// RenamedFrom is the candidate's meta key MetaRenamedFrom (candidate side only).
	RenamedFrom string `json:"renamedFrom,omitempty"`
	// Owner is the candidate's meta.owner (candidate side only; an owner of what reads the node's relation).
	Owner string `json:"owner,omitempty"`
	// JobName is the current name of the node's job (current side only: a withdrawal names the job by it).
	JobName string `json:"-"`
	// Tests are the enabled dbt tests attached to the node (candidate side only), sorted by unique id.
	Tests []DeclaredTest `json:"tests,omitempty"`
}

// DeclaredTest is one dbt test of a node as the manifest declares it: what dbt-ol reports when it runs it (the
// dataQualityAssertions facet's name, and its assertion and column).
type DeclaredTest struct {
	UniqueID string `json:"uniqueId"`
	// Name is the test node's name (not_null_orders_order_id): the assertion's name dbt-ol reports.
	Name string `json:"name"`
	// TestName is the generic test (not_null, unique, ...; "" for a singular test): the assertion dbt-ol reports.
	TestName string `json:"testName,omitempty"`
	Column   string `json:"column,omitempty"`
}

// FromManifest returns the declared nodes of a manifest exactly as Events declares them (the same nodes, inputs
// and columns), sorted by unique id.
func FromManifest(m *dbtmanifest.Manifest) ([]DeclaredNode, error) {
	byID := map[string]dbtmanifest.Node{}
	for _, n := range append(slices.Clone(m.Nodes), m.Sources...) {
		byID[n.UniqueID] = n
	}
	unresolved := map[string]bool{}
	tests := map[string][]DeclaredTest{}
	for _, n := range m.Nodes {
		if n.ResourceType == dbtmanifest.TypeTest && n.Enabled && n.TestedNode() != "" {
			tests[n.TestedNode()] = append(tests[n.TestedNode()], DeclaredTest{UniqueID: n.UniqueID, Name: n.Name, TestName: n.TestName, Column: n.ColumnName})
		}
	}
	var out []DeclaredNode
	for _, n := range m.Nodes {
		if _, _, ok := jobOf(n); !ok || !n.Enabled || n.TableName() == "" || n.Materialized == "ephemeral" {
			continue
		}
		if len(out) == MaxDeclaredNodes {
			return nil, fmt.Errorf("nodes: at most %d models, seeds and snapshots per declaration", MaxDeclaredNodes)
		}
		d := DeclaredNode{UniqueID: n.UniqueID, Dataset: n.TableName(), Inputs: inputsOf(n, byID, unresolved), Tests: tests[n.UniqueID]}
		for _, c := range n.Columns {
			d.Columns = append(d.Columns, DeclaredColumn{Name: c.Name, Type: c.DataType})
		}
		if s, ok := n.Meta[MetaRenamedFrom].(string); ok {
			d.RenamedFrom = strings.TrimSpace(s)
		}
		if s, ok := n.Meta[dbtmanifest.MetaOwner].(string); ok {
			d.Owner = strings.TrimSpace(s)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DeclaredNode) int { return strings.Compare(a.UniqueID, b.UniqueID) })
	return out, nil
}

// ParseRenamed reads renamed parameters `old=new` (unique ids, or model names of the project: `old_name=new_name`
// stands for model.<project>.old_name=model.<project>.new_name).
func ParseRenamed(project string, pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for i, p := range pairs {
		from, to, ok := strings.Cut(p, "=")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("renamed[%d]: must be old=new (unique ids or model names), got %q", i, p)
		}
		from, to = qualify(project, from), qualify(project, to)
		if _, dup := out[from]; dup {
			return nil, fmt.Errorf("renamed[%d]: %s is renamed twice", i, from)
		}
		out[from] = to
	}
	return out, nil
}

func qualify(project, id string) string {
	if strings.Contains(id, ".") {
		return id
	}
	return dbtmanifest.TypeModel + "." + project + "." + id
}

// Diff compares the candidate with the current declarations: nodes added and removed by unique id (a rename
// only where renamed, or the candidate's meta key, says so: current id -> candidate id), declared columns added,
// removed and retyped (names compared case-insensitively, types when both sides declare one), and dependencies
// added and removed, for the nodes on both sides (a renamed pair counts as one node). A rename that names a node
// the current declarations lack, or one the candidate lacks, or one still present on both sides, is an error
// naming the field and the rule.
func Diff(current, candidate []DeclaredNode, renamed map[string]string) (*api.ReleaseDiff, error) {
	cur, cand := index(current), index(candidate)
	pairs := map[string]string{} // current id -> candidate id
	source := map[string]string{}
	for from, to := range renamed {
		pairs[from], source[from] = to, "flag"
	}
	for _, c := range candidate {
		if c.RenamedFrom == "" {
			continue
		}
		if prev, ok := pairs[c.RenamedFrom]; ok && prev != c.UniqueID {
			return nil, fmt.Errorf("renamed: %s is renamed to %s by the request and to %s by meta.%s", c.RenamedFrom, prev, c.UniqueID, MetaRenamedFrom)
		}
		if _, ok := pairs[c.RenamedFrom]; !ok {
			pairs[c.RenamedFrom], source[c.RenamedFrom] = c.UniqueID, "meta"
		}
	}
	field := func(from string) string {
		if source[from] == "meta" {
			return "nodes[" + pairs[from] + "].meta." + MetaRenamedFrom
		}
		return "renamed"
	}
	for from, to := range pairs {
		switch {
		case cur[from] == nil:
			return nil, fmt.Errorf("%s: %s is not in the project's current declarations", field(from), from)
		case cand[to] == nil:
			return nil, fmt.Errorf("%s: %s is not in the candidate manifest", field(from), to)
		case cand[from] != nil:
			return nil, fmt.Errorf("%s: %s is still in the candidate manifest (a rename removes it)", field(from), from)
		case cur[to] != nil:
			return nil, fmt.Errorf("%s: %s is already in the current declarations (a rename adds it)", field(from), to)
		}
	}
	into := map[string]bool{}
	for _, to := range pairs {
		if into[to] {
			return nil, fmt.Errorf("renamed: two nodes are renamed to %s", to)
		}
		into[to] = true
	}
	d := &api.ReleaseDiff{Added: []*api.DiffNode{}, Removed: []*api.DiffNode{}, Renamed: []*api.RenamedNode{},
		Columns: []*api.ColumnChange{}, Dependencies: []*api.DependencyChange{}}
	for _, c := range current {
		to, isRenamed := pairs[c.UniqueID]
		switch {
		case isRenamed:
			n := cand[to]
			d.Renamed = append(d.Renamed, &api.RenamedNode{From: c.UniqueID, To: to, FromDataset: c.Dataset,
				ToDataset: n.Dataset, Source: source[c.UniqueID]})
			compareNode(d, c, *n)
		case cand[c.UniqueID] == nil:
			d.Removed = append(d.Removed, &api.DiffNode{UniqueID: c.UniqueID, Dataset: c.Dataset})
		default:
			compareNode(d, c, *cand[c.UniqueID])
		}
	}
	for _, c := range candidate {
		if cur[c.UniqueID] == nil && !into[c.UniqueID] {
			d.Added = append(d.Added, &api.DiffNode{UniqueID: c.UniqueID, Dataset: c.Dataset})
		}
	}
	slices.SortFunc(d.Renamed, func(a, b *api.RenamedNode) int { return strings.Compare(a.From, b.From) })
	return d, nil
}

func index(ns []DeclaredNode) map[string]*DeclaredNode {
	out := make(map[string]*DeclaredNode, len(ns))
	for i := range ns {
		out[ns[i].UniqueID] = &ns[i]
	}
	return out
}

// compareNode adds the column and dependency changes of one node (cur and cand may be a renamed pair: the
// changes are named by the candidate's id and relation).
func compareNode(d *api.ReleaseDiff, cur, cand DeclaredNode) {
	was := map[string]DeclaredColumn{}
	for _, c := range cur.Columns {
		was[strings.ToLower(c.Name)] = c
	}
	is := map[string]bool{}
	for _, c := range cand.Columns {
		k := strings.ToLower(c.Name)
		is[k] = true
		old, ok := was[k]
		switch {
		case !ok:
			d.Columns = append(d.Columns, &api.ColumnChange{UniqueID: cand.UniqueID, Dataset: cand.Dataset, Column: c.Name,
				Change: api.DiffAdded, ToType: opt(c.Type)})
		case old.Type != "" && c.Type != "" && !strings.EqualFold(old.Type, c.Type):
			d.Columns = append(d.Columns, &api.ColumnChange{UniqueID: cand.UniqueID, Dataset: cand.Dataset, Column: c.Name,
				Change: api.DiffRetyped, FromType: opt(old.Type), ToType: opt(c.Type)})
		}
	}
	for _, c := range cur.Columns {
		if !is[strings.ToLower(c.Name)] {
			// named by the current relation: that is where the column is read from today
			d.Columns = append(d.Columns, &api.ColumnChange{UniqueID: cand.UniqueID, Dataset: cur.Dataset, Column: c.Name,
				Change: api.DiffRemoved, FromType: opt(c.Type)})
		}
	}
	for _, in := range cand.Inputs {
		if !slices.Contains(cur.Inputs, in) {
			d.Dependencies = append(d.Dependencies, &api.DependencyChange{UniqueID: cand.UniqueID, Dataset: cand.Dataset,
				Dependency: in, Change: api.DiffAdded})
		}
	}
	for _, in := range cur.Inputs {
		if !slices.Contains(cand.Inputs, in) {
			d.Dependencies = append(d.Dependencies, &api.DependencyChange{UniqueID: cand.UniqueID, Dataset: cand.Dataset,
				Dependency: in, Change: api.DiffRemoved})
		}
	}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ExposuresOf returns the manifest's enabled exposures by their consumer dataset's name (the exposure's
// unique_id, in the job namespace: ADR 0070), as the impact report names them.
func ExposuresOf(m *dbtmanifest.Manifest) map[string]api.AffectedExposure {
	out := map[string]api.AffectedExposure{}
	for _, e := range m.Exposures {
		if e.Enabled {
			out[e.UniqueID] = api.AffectedExposure{UniqueID: e.UniqueID, Name: e.Name, Label: e.Label, Type: e.Type, URL: e.URL,
				OwnerName: e.OwnerName, OwnerEmail: e.OwnerEmail}
		}
	}
	return out
}
