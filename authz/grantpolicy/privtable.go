package grantpolicy

import (
	"math/bits"

	"github.com/headwater-data/headwater/authz"
)

// privSet is a set of privileges as a bit mask.
type privSet uint16

// bit is p's bit; 0 for an unknown privilege.
func bit(p authz.Privilege) privSet {
	for i, q := range authz.Privileges() {
		if q == p {
			return 1 << i
		}
	}
	return 0
}

// privTable holds, per privilege bit, its closure (what it implies) and its up-closure (what implies it); it is
// computed once from Implies by every Evaluator.
type privTable struct {
	closure [maxPrivileges]privSet
	up      [maxPrivileges]privSet
}

// maxPrivileges is how many privileges a privSet holds (its bits); authz.Privileges may list up to this many.
const maxPrivileges = 16

func newPrivTable() privTable {
	var t privTable
	privs := authz.Privileges()
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

func closureOf(p authz.Privilege) privSet {
	set := bit(p)
	for _, q := range authz.Implies(p) {
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
