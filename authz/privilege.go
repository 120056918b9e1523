package authz

import "slices"

// Privilege is what a grant allows (or denies) on a securable.
type Privilege string

// Privileges. The implication table (Implies) says which privilege carries which.
const (
	PrivList          Privilege = "LIST"           // navigate: namespaces and names below a securable
	PrivDescribe      Privilege = "DESCRIBE"       // existence, name, schema, non-sensitive facets
	PrivViewLineage   Privilege = "VIEW_LINEAGE"   // lineage edges leaving the node
	PrivViewSQL       Privilege = "VIEW_SQL"       // sql and source code of jobs
	PrivViewSensitive Privilege = "VIEW_SENSITIVE" // sensitive tags and what they mark
	PrivProduce       Privilege = "PRODUCE"        // write events for jobs and outputs in a namespace
	PrivManageGrants  Privilege = "MANAGE_GRANTS"  // manage grants on the securable; implies everything
	// PrivManageInventory registers and retires expected-job inventories for jobs in a namespace (docs/trust.md).
	PrivManageInventory Privilege = "MANAGE_INVENTORY"
	// PrivManageTags tags a dataset and its fields and blocks propagation through them by mutation (ADR 0067,
	// docs/governance.md): a governance act, deliberately not implied by PRODUCE.
	PrivManageTags Privilege = "MANAGE_TAGS"
)

// Privileges lists every privilege in a fixed order.
func Privileges() []Privilege {
	return []Privilege{PrivList, PrivDescribe, PrivViewLineage, PrivViewSQL, PrivViewSensitive, PrivProduce,
		PrivManageGrants, PrivManageInventory, PrivManageTags}
}

// Implies is THE implication table: the privileges a privilege directly carries. Holding a privilege means
// holding the transitive closure of this table. Seeing lineage, SQL or sensitive tags implies seeing that the
// node exists; seeing a node implies navigating to it; managing grants implies everything.
func Implies(p Privilege) []Privilege {
	switch p {
	case PrivManageGrants:
		return []Privilege{PrivList, PrivDescribe, PrivViewLineage, PrivViewSQL, PrivViewSensitive, PrivProduce,
			PrivManageInventory, PrivManageTags}
	case PrivViewLineage, PrivViewSQL, PrivViewSensitive:
		return []Privilege{PrivDescribe}
	case PrivDescribe:
		return []Privilege{PrivList}
	default: // LIST, PRODUCE, MANAGE_INVENTORY, MANAGE_TAGS
		return nil
	}
}

// Valid reports whether p is a known privilege.
func (p Privilege) Valid() bool { return slices.Contains(Privileges(), p) }
