package grantstore

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// Cypher of the grant store. Grants and bindings reference their role by name; deleting a role deletes them.
const (
	cypherRoleExists = `MATCH (r:Role {name: $name}) RETURN count(r) AS n`
	cypherCreateRole = `MERGE (r:Role {name: $name})
ON CREATE SET r.description = $description, r.source = $source, r.createdAt = $now, r.createdBy = $actor`
	cypherDeleteRole = `MATCH (r:Role {name: $name})
OPTIONAL MATCH (g:Grant {role: $name})
OPTIONAL MATCH (b:RoleBinding {role: $name})
DETACH DELETE r, g, b`
	cypherGrant = `MERGE (g:Grant {id: $id})
ON CREATE SET g.role = $role, g.privilege = $privilege, g.effect = $effect, g.secKind = $secKind,
  g.secEnv = $secEnv, g.secNamespace = $secNamespace, g.secName = $secName, g.source = $source,
  g.createdAt = $now, g.createdBy = $actor`
	cypherRevoke = `MATCH (g:Grant {id: $id}) DELETE g`
	cypherBind   = `MERGE (b:RoleBinding {id: $id})
ON CREATE SET b.subject = $subject, b.role = $role, b.source = $source, b.createdAt = $now, b.createdBy = $actor`
	cypherUnbind = `MATCH (b:RoleBinding {id: $id}) DELETE b`
	cypherBump   = `MERGE (e:GrantEpoch {id: $id}) ON CREATE SET e.epoch = 0
SET e.epoch = e.epoch + 1, e.changedAt = $now, e.changedBy = $actor RETURN max(e.epoch) AS epoch`
	cypherEpoch  = `OPTIONAL MATCH (e:GrantEpoch {id: $id}) RETURN coalesce(max(e.epoch), 0) AS epoch`
	cypherRoles  = `MATCH (r:Role) RETURN r.name AS name, coalesce(r.description, '') AS description, coalesce(r.source, '') AS source ORDER BY name`
	cypherGrants = `MATCH (g:Grant) RETURN g.role AS role, g.privilege AS privilege, g.effect AS effect, g.secKind AS kind,
  coalesce(g.secEnv, '') AS env, coalesce(g.secNamespace, '') AS ns, coalesce(g.secName, '') AS name,
  coalesce(g.source, '') AS source ORDER BY g.id`
	cypherBindings = `MATCH (b:RoleBinding) RETURN b.subject AS subject, b.role AS role, coalesce(b.source, '') AS source ORDER BY b.id`
)

type txApplier struct {
	ctx   context.Context
	tx    neo4j.ManagedTransaction
	actor string
	now   int64
}

func (w *txApplier) apply(changes []grant.Change) (grant.ApplyResult, error) {
	var res grant.ApplyResult
	for _, c := range changes {
		changed, err := w.one(c)
		if err != nil {
			return grant.ApplyResult{}, err
		}
		if changed {
			res.Changed = append(res.Changed, c)
		}
	}
	q := cypherEpoch
	if len(res.Changed) > 0 {
		q = cypherBump
	}
	rec, err := w.single(q, map[string]any{"id": epochID})
	if err != nil {
		return grant.ApplyResult{}, err
	}
	v, _ := rec.Get("epoch")
	res.Epoch, _ = v.(int64)
	return res, nil
}

func (w *txApplier) one(c grant.Change) (bool, error) {
	switch c.Op {
	case grant.OpCreateRole:
		return w.run(cypherCreateRole, map[string]any{"name": c.Role.Name, "description": c.Role.Description,
			"source": sourceOr(c.Role.Source)})
	case grant.OpDeleteRole:
		return w.run(cypherDeleteRole, map[string]any{"name": c.Role.Name})
	case grant.OpGrant:
		if err := w.requireRole(c.Grant.Role); err != nil {
			return false, err
		}
		return w.run(cypherGrant, grantParams(c.Grant.Normalized()))
	case grant.OpRevoke:
		return w.run(cypherRevoke, map[string]any{"id": c.Grant.Normalized().ID()})
	case grant.OpBindRole:
		if err := w.requireRole(c.Binding.Role); err != nil {
			return false, err
		}
		return w.run(cypherBind, map[string]any{"id": c.Binding.ID(), "subject": c.Binding.Subject,
			"role": c.Binding.Role, "source": sourceOr(c.Binding.Source)})
	case grant.OpUnbindRole:
		return w.run(cypherUnbind, map[string]any{"id": c.Binding.ID()})
	}
	return false, fmt.Errorf("%w: unknown change %q", authz.ErrInvalid, c.Op)
}

func grantParams(g grant.Grant) map[string]any {
	return map[string]any{"id": g.ID(), "role": g.Role, "privilege": string(g.Privilege), "effect": string(g.Effect),
		"secKind": string(g.On.Kind), "secEnv": g.On.Environment, "secNamespace": g.On.Namespace,
		"secName": g.On.Name, "source": sourceOr(g.Source)}
}

func sourceOr(s string) string {
	if s == "" {
		return grant.SourceAPI
	}
	return s
}

func (w *txApplier) requireRole(name string) error {
	rec, err := w.single(cypherRoleExists, map[string]any{"name": name})
	if err != nil {
		return err
	}
	if n, _ := rec.Get("n"); n.(int64) == 0 {
		return fmt.Errorf("%w: %q", grant.ErrUnknownRole, name)
	}
	return nil
}

// run executes a statement and reports whether it changed the graph.
func (w *txApplier) run(q string, params map[string]any) (bool, error) {
	params["now"], params["actor"] = w.now, w.actor
	res, err := w.tx.Run(w.ctx, q, params)
	if err != nil {
		return false, err
	}
	sum, err := res.Consume(w.ctx)
	if err != nil {
		return false, err
	}
	return sum.Counters().ContainsUpdates(), nil
}

func (w *txApplier) single(q string, params map[string]any) (*neo4j.Record, error) {
	params["now"], params["actor"] = w.now, w.actor
	res, err := w.tx.Run(w.ctx, q, params)
	if err != nil {
		return nil, err
	}
	return res.Single(w.ctx)
}

func readSnapshot(ctx context.Context, tx neo4j.ManagedTransaction) (grant.Snapshot, error) {
	var snap grant.Snapshot
	err := collect(ctx, tx, cypherRoles, func(r *neo4j.Record) {
		snap.Roles = append(snap.Roles, grant.Role{Name: str(r, "name"), Description: str(r, "description"),
			Source: str(r, "source")})
	})
	if err == nil {
		err = collect(ctx, tx, cypherGrants, func(r *neo4j.Record) {
			snap.Grants = append(snap.Grants, grant.Grant{Role: str(r, "role"), Privilege: authz.Privilege(str(r, "privilege")),
				Effect: grant.Effect(str(r, "effect")), Source: str(r, "source"),
				On: grant.Securable{Kind: grant.SecurableKind(str(r, "kind")), Environment: str(r, "env"),
					Namespace: str(r, "ns"), Name: str(r, "name")}})
		})
	}
	if err == nil {
		err = collect(ctx, tx, cypherBindings, func(r *neo4j.Record) {
			snap.Bindings = append(snap.Bindings, grant.RoleBinding{Subject: str(r, "subject"), Role: str(r, "role"),
				Source: str(r, "source")})
		})
	}
	return snap, err
}

func collect(ctx context.Context, tx neo4j.ManagedTransaction, q string, each func(*neo4j.Record)) error {
	res, err := tx.Run(ctx, q, nil)
	if err != nil {
		return err
	}
	for res.Next(ctx) {
		each(res.Record())
	}
	return res.Err()
}

func str(r *neo4j.Record, key string) string {
	v, _ := r.Get(key)
	s, _ := v.(string)
	return s
}
