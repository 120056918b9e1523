package grant

import (
	"fmt"

	"github.com/headwater-data/headwater/authz"
)

// ChangeOp is one kind of grant-state change.
type ChangeOp string

// Change operations.
const (
	OpCreateRole ChangeOp = "CREATE_ROLE"
	OpDeleteRole ChangeOp = "DELETE_ROLE" // also removes the role's grants and bindings
	OpGrant      ChangeOp = "GRANT"
	OpRevoke     ChangeOp = "REVOKE"
	OpBindRole   ChangeOp = "BIND_ROLE"
	OpUnbindRole ChangeOp = "UNBIND_ROLE"
)

// Change is one change of the grant state; exactly the field of its Op is set.
type Change struct {
	Op      ChangeOp     `json:"op"`
	Role    *Role        `json:"role,omitempty"`
	Grant   *Grant       `json:"grant,omitempty"`
	Binding *RoleBinding `json:"binding,omitempty"`
}

// ApplyResult says what a batch of changes did.
type ApplyResult struct {
	Epoch   int64    // the epoch after the batch (bumped once if anything changed)
	Changed []Change // the changes that altered the state (a change already in force is not listed)
}

// Validate checks that the change carries the valid value its Op needs.
func (c Change) Validate() error {
	switch c.Op {
	case OpCreateRole, OpDeleteRole:
		if c.Role == nil {
			return fmt.Errorf("%w: %s needs a role", authz.ErrInvalid, c.Op)
		}
		return c.Role.Validate()
	case OpGrant, OpRevoke:
		if c.Grant == nil {
			return fmt.Errorf("%w: %s needs a grant", authz.ErrInvalid, c.Op)
		}
		return c.Grant.Validate()
	case OpBindRole, OpUnbindRole:
		if c.Binding == nil {
			return fmt.Errorf("%w: %s needs a binding", authz.ErrInvalid, c.Op)
		}
		return c.Binding.Validate()
	}
	return fmt.Errorf("%w: unknown change %q", authz.ErrInvalid, c.Op)
}
