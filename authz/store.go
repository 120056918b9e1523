package authz

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/graph"
)

// Node labels of the grant state in Neo4j. The constraints on them belong in graph/migrate.go:
//
//	CREATE CONSTRAINT role_name IF NOT EXISTS FOR (n:Role) REQUIRE n.name IS UNIQUE
//	CREATE CONSTRAINT grant_id IF NOT EXISTS FOR (n:Grant) REQUIRE n.id IS UNIQUE
//	CREATE CONSTRAINT role_binding_id IF NOT EXISTS FOR (n:RoleBinding) REQUIRE n.id IS UNIQUE
//	CREATE CONSTRAINT grant_epoch_id IF NOT EXISTS FOR (n:GrantEpoch) REQUIRE n.id IS UNIQUE
//	CREATE INDEX grant_role IF NOT EXISTS FOR (n:Grant) ON (n.role)
//	CREATE INDEX role_binding_subject IF NOT EXISTS FOR (n:RoleBinding) ON (n.subject)
//	CREATE INDEX role_binding_role IF NOT EXISTS FOR (n:RoleBinding) ON (n.role)
const (
	LabelRole        = "Role"
	LabelGrant       = "Grant"
	LabelRoleBinding = "RoleBinding"
	LabelGrantEpoch  = "GrantEpoch"
)

// epochID is the id of the single GrantEpoch node.
const epochID = "headwater"

// maxLoadAttempts bounds Load's retries when the epoch moves while it reads.
const maxLoadAttempts = 5

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

// GrantStore persists roles, grants, bindings and the grant epoch in Neo4j. It creates no schema: the
// constraints above are migrations.
type GrantStore struct {
	store *graph.Store
	clock func() time.Time
}

var _ GrantSource = (*GrantStore)(nil)

// NewGrantStore returns a store over s.
func NewGrantStore(s *graph.Store, clock func() time.Time) *GrantStore {
	return &GrantStore{store: s, clock: clock}
}

// Epoch reads the grant epoch (0 before any change).
func (s *GrantStore) Epoch(ctx context.Context) (int64, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.store.Driver,
		"OPTIONAL MATCH (e:GrantEpoch {id: $id}) RETURN coalesce(max(e.epoch), 0) AS epoch",
		map[string]any{"id": epochID}, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.store.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	v, _ := res.Records[0].Get("epoch")
	n, _ := v.(int64)
	return n, nil
}

// Load reads the whole grant state at one epoch: it re-reads when a change landed while it was reading.
func (s *GrantStore) Load(ctx context.Context) (Snapshot, error) {
	for range maxLoadAttempts {
		before, err := s.Epoch(ctx)
		if err != nil {
			return Snapshot{}, err
		}
		snap, err := s.read(ctx)
		if err != nil {
			return Snapshot{}, err
		}
		after, err := s.Epoch(ctx)
		if err != nil {
			return Snapshot{}, err
		}
		if before == after {
			snap.Epoch = after
			return snap, nil
		}
	}
	return Snapshot{}, fmt.Errorf("%w: grant epoch kept changing during %d loads", ErrUnavailable, maxLoadAttempts)
}

func (s *GrantStore) read(ctx context.Context) (Snapshot, error) {
	sess := s.store.Session(ctx, neo4j.AccessModeRead)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteRead(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return readSnapshot(ctx, tx)
	}, neo4j.WithTxTimeout(s.store.TxTimeout()))
	if err != nil {
		return Snapshot{}, fmt.Errorf("%w: read grants: %w", ErrUnavailable, err)
	}
	return out.(Snapshot), nil
}

// Apply applies the changes in one transaction and bumps the epoch once if any of them changed the state.
// A grant or binding naming a missing role fails the whole batch with ErrUnknownRole.
func (s *GrantStore) Apply(ctx context.Context, actor string, changes []Change) (ApplyResult, error) {
	for _, c := range changes {
		if err := c.Validate(); err != nil {
			return ApplyResult{}, err
		}
	}
	sess := s.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		w := &txApplier{ctx: ctx, tx: tx, actor: actor, now: graph.Millis(s.clock())}
		return w.apply(changes)
	}, neo4j.WithTxTimeout(s.store.TxTimeout()))
	if err != nil {
		if errors.Is(err, ErrUnknownRole) || errors.Is(err, ErrInvalid) {
			return ApplyResult{}, err
		}
		return ApplyResult{}, fmt.Errorf("%w: apply grant changes: %w", ErrUnavailable, err)
	}
	return out.(ApplyResult), nil
}

// Validate checks that the change carries the valid value its Op needs.
func (c Change) Validate() error {
	switch c.Op {
	case OpCreateRole, OpDeleteRole:
		if c.Role == nil {
			return fmt.Errorf("%w: %s needs a role", ErrInvalid, c.Op)
		}
		return c.Role.Validate()
	case OpGrant, OpRevoke:
		if c.Grant == nil {
			return fmt.Errorf("%w: %s needs a grant", ErrInvalid, c.Op)
		}
		return c.Grant.Validate()
	case OpBindRole, OpUnbindRole:
		if c.Binding == nil {
			return fmt.Errorf("%w: %s needs a binding", ErrInvalid, c.Op)
		}
		return c.Binding.Validate()
	}
	return fmt.Errorf("%w: unknown change %q", ErrInvalid, c.Op)
}
