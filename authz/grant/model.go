// Package grant is the grant model: roles, grants of privileges on securables (ROOT > ENVIRONMENT > NAMESPACE >
// PREFIX > DATASET|JOB, matched on whole name segments), role bindings, the changes that alter them, and how a
// securable is canonicalised like event identities. It holds values and their validation only: no I/O. The
// evaluator (authz/grantpolicy) compiles them into decisions; the grant store (authz/grantstore) persists them.
package grant

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authz"
)

// ErrUnknownRole means a grant or binding names a role that does not exist; callers map it with errors.Is.
var ErrUnknownRole = errors.New("unknown role")

// Effect says whether a grant allows or denies. A deny anywhere on a node's path wins over every allow.
type Effect string

// Effects.
const (
	Allow Effect = "ALLOW"
	Deny  Effect = "DENY"
)

// Sources of grants, roles and bindings: the policy file owns what it created (a later file without it removes
// it); grants made through the management API are never touched by the file.
const (
	SourceAPI  = "api"
	SourceFile = "file"
)

// Role is a named set of grants that principals are bound to.
type Role struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
}

// Grant gives (or with Effect Deny, takes away) a privilege on a securable to every principal bound to Role.
type Grant struct {
	Role      string          `json:"role"`
	Privilege authz.Privilege `json:"privilege"`
	Effect    Effect          `json:"effect"`
	On        Securable       `json:"on"`
	Source    string          `json:"source,omitempty"`
}

// RoleBinding binds a principal's subject to a role.
type RoleBinding struct {
	Subject string `json:"subject"`
	Role    string `json:"role"`
	Source  string `json:"source,omitempty"`
}

// Snapshot is the whole grant state at one epoch.
type Snapshot struct {
	Epoch    int64
	Roles    []Role
	Grants   []Grant
	Bindings []RoleBinding
}

// ID is the stable identity of a grant: (role, effect, privilege, securable). Granting twice is one grant.
func (g Grant) ID() string {
	return hashID("grant", g.Role, string(g.effect()), string(g.Privilege), g.On.String())
}

// ID is the stable identity of a binding.
func (b RoleBinding) ID() string { return hashID("binding", b.Subject, b.Role) }

func (g Grant) effect() Effect {
	if g.Effect == "" {
		return Allow
	}
	return g.Effect
}

func hashID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return hex.EncodeToString(h[:16])
}

// maxNameLen bounds role names and subjects.
const maxNameLen = 256

func validName(what, s string) error {
	if s == "" || len(s) > maxNameLen || strings.TrimSpace(s) != s {
		return fmt.Errorf("%w: %s %q must be 1..%d characters without surrounding spaces", authz.ErrInvalid, what, s, maxNameLen)
	}
	return nil
}

// Validate checks the role name.
func (r Role) Validate() error { return validName("role name", r.Name) }

// Validate checks the grant: a known privilege and effect, a well-formed securable, and PRODUCE only on
// ROOT, ENVIRONMENT or NAMESPACE (ingestion checks namespaces).
func (g Grant) Validate() error {
	if err := validName("role name", g.Role); err != nil {
		return err
	}
	if !g.Privilege.Valid() {
		return fmt.Errorf("%w: unknown privilege %q", authz.ErrInvalid, g.Privilege)
	}
	if e := g.effect(); e != Allow && e != Deny {
		return fmt.Errorf("%w: effect %q must be ALLOW or DENY", authz.ErrInvalid, g.Effect)
	}
	if err := g.On.Validate(); err != nil {
		return err
	}
	if g.Privilege == authz.PrivProduce && g.On.Kind != SecRoot && g.On.Kind != SecEnvironment && g.On.Kind != SecNamespace {
		return fmt.Errorf("%w: PRODUCE is granted on ROOT, ENVIRONMENT or NAMESPACE, not %s", authz.ErrInvalid, g.On.Kind)
	}
	return nil
}

// Validate checks the binding.
func (b RoleBinding) Validate() error {
	if err := validName("subject", b.Subject); err != nil {
		return err
	}
	return validName("role name", b.Role)
}

// Normalized returns the grant with defaults filled in (effect ALLOW, trimmed prefix).
func (g Grant) Normalized() Grant {
	g.Effect = g.effect()
	g.On = g.On.Normalized()
	return g
}
