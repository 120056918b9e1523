// Package grantstore persists the grant state (roles, grants, bindings and the grant epoch) in Neo4j, and
// resolves node keys to their current names for the policy. It is the only authz package that imports the Neo4j
// driver; it creates no schema (the constraints it expects are migrations).
package grantstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/authz/grantpolicy"
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

// GrantStore persists roles, grants, bindings and the grant epoch in Neo4j. It creates no schema: the
// constraints above are migrations.
type GrantStore struct {
	store *graph.Store
	clock func() time.Time
}

var _ grantpolicy.GrantSource = (*GrantStore)(nil)

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
		return 0, fmt.Errorf("%w: %w", authz.ErrUnavailable, err)
	}
	v, _ := res.Records[0].Get("epoch")
	n, _ := v.(int64)
	return n, nil
}

// Load reads the whole grant state at one epoch: it re-reads when a change landed while it was reading.
func (s *GrantStore) Load(ctx context.Context) (grant.Snapshot, error) {
	for range maxLoadAttempts {
		before, err := s.Epoch(ctx)
		if err != nil {
			return grant.Snapshot{}, err
		}
		snap, err := s.read(ctx)
		if err != nil {
			return grant.Snapshot{}, err
		}
		after, err := s.Epoch(ctx)
		if err != nil {
			return grant.Snapshot{}, err
		}
		if before == after {
			snap.Epoch = after
			return snap, nil
		}
	}
	return grant.Snapshot{}, fmt.Errorf("%w: grant epoch kept changing during %d loads", authz.ErrUnavailable, maxLoadAttempts)
}

func (s *GrantStore) read(ctx context.Context) (grant.Snapshot, error) {
	sess := s.store.Session(ctx, neo4j.AccessModeRead)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteRead(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		return readSnapshot(ctx, tx)
	}, neo4j.WithTxTimeout(s.store.TxTimeout()))
	if err != nil {
		return grant.Snapshot{}, fmt.Errorf("%w: read grants: %w", authz.ErrUnavailable, err)
	}
	return out.(grant.Snapshot), nil
}

// Apply applies the changes in one transaction and bumps the epoch once if any of them changed the state.
// A grant or binding naming a missing role fails the whole batch with ErrUnknownRole.
func (s *GrantStore) Apply(ctx context.Context, actor string, changes []grant.Change) (grant.ApplyResult, error) {
	for _, c := range changes {
		if err := c.Validate(); err != nil {
			return grant.ApplyResult{}, err
		}
	}
	sess := s.store.Session(ctx, neo4j.AccessModeWrite)
	defer func() { _ = sess.Close(context.Background()) }()
	out, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		w := &txApplier{ctx: ctx, tx: tx, actor: actor, now: graph.Millis(s.clock())}
		return w.apply(changes)
	}, neo4j.WithTxTimeout(s.store.TxTimeout()))
	if err != nil {
		if errors.Is(err, grant.ErrUnknownRole) || errors.Is(err, authz.ErrInvalid) {
			return grant.ApplyResult{}, err
		}
		return grant.ApplyResult{}, fmt.Errorf("%w: apply grant changes: %w", authz.ErrUnavailable, err)
	}
	return out.(grant.ApplyResult), nil
}
