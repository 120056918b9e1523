package grantpolicy

import (
	"testing"

	"github.com/headwater-data/headwater/authz"
)

// TestPrivilegesFitTheMask: a new privilege needs only its constant, its place in authz.Privileges and its row of
// authz.Implies; the compiled masks hold up to maxPrivileges of them, and every privilege implies itself.
func TestPrivilegesFitTheMask(t *testing.T) {
	privs := authz.Privileges()
	if len(privs) > maxPrivileges {
		t.Fatalf("%d privileges, the masks hold %d", len(privs), maxPrivileges)
	}
	table := newPrivTable()
	for i, p := range privs {
		if bit(p) != 1<<i || table.closure[i]&bit(p) == 0 || !p.Valid() {
			t.Errorf("%s: bit %b, closure %b", p, bit(p), table.closure[i])
		}
	}
	if bit("READ") != 0 || authz.Privilege("READ").Valid() {
		t.Error("an unknown privilege must have no bit")
	}
}
