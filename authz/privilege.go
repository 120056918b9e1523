package authz

import (
	"fmt"
	"math/bits"
)

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
)

// Privileges lists every privilege in a fixed order.
func Privileges() []Privilege {
	return []Privilege{PrivList, PrivDescribe, PrivViewLineage, PrivViewSQL, PrivViewSensitive, PrivProduce,
		PrivManageGrants, PrivManageInventory}
}

// Implies is THE implication table: the privileges a privilege directly carries. Holding a privilege means
// holding the transitive closure of this table. Seeing lineage, SQL or sensitive tags implies seeing that the
// node exists; seeing a node implies navigating to it; managing grants implies everything.
func Implies(p Privilege) []Privilege {
	switch p {
	case PrivManageGrants:
		return []Privilege{PrivList, PrivDescribe, PrivViewLineage, PrivViewSQL, PrivViewSensitive, PrivProduce,
			PrivManageInventory}
	case PrivViewLineage, PrivViewSQL, PrivViewSensitive:
		return []Privilege{PrivDescribe}
	case PrivDescribe:
		return []Privilege{PrivList}
	default: // LIST, PRODUCE, MANAGE_INVENTORY
		return nil
	}
}

// Valid reports whether p is a known privilege.
func (p Privilege) Valid() bool { return p.bit() != 0 }

// privSet is a set of privileges as a bit mask.
type privSet uint16

func (p Privilege) bit() privSet {
	for i, q := range Privileges() {
		if q == p {
			return 1 << i
		}
	}
	return 0
}

// ParsePrivilege returns the privilege named s.
func ParsePrivilege(s string) (Privilege, error) {
	p := Privilege(s)
	if !p.Valid() {
		return "", fmt.Errorf("%w: unknown privilege %q", ErrInvalid, s)
	}
	return p, nil
}

// privTable holds, per privilege bit, its closure (what it implies) and its up-closure (what implies it); it is
// computed once from Implies by every Evaluator.
type privTable struct {
	closure [8]privSet
	up      [8]privSet
}

func newPrivTable() privTable {
	var t privTable
	privs := Privileges()
	for i, p := range privs {
		t.closure[i] = closureOf(p)
	}
	for i := range privs {
		for j := range privs {
			if t.closure[j]&(1<<i) != 0 {
				t.up[i] |= 1 << j
			}
		}
	}
	return t
}

func closureOf(p Privilege) privSet {
	set := p.bit()
	for _, q := range Implies(p) {
		set |= closureOf(q)
	}
	return set
}

// expand returns every privilege implied by a set.
func (t *privTable) expand(s privSet) privSet {
	return t.each(s, t.closure[:])
}

// implying returns every privilege that implies a member of s: what a deny of s takes away.
func (t *privTable) implying(s privSet) privSet {
	return t.each(s, t.up[:])
}

func (t *privTable) each(s privSet, table []privSet) privSet {
	var out privSet
	for s != 0 {
		i := bits.TrailingZeros16(uint16(s))
		out |= table[i]
		s &^= 1 << i
	}
	return out
}

// effective is what allows and denies accumulated along a path give: the closure of the allowed privileges,
// minus every privilege that implies a denied one (deny wins).
func (t *privTable) effective(m masks) privSet {
	return t.expand(m.allow) &^ t.implying(m.deny)
}

// masks are the allowed and denied privileges of one securable in a principal's view.
type masks struct{ allow, deny privSet }

func (m masks) or(o masks) masks { return masks{m.allow | o.allow, m.deny | o.deny} }
