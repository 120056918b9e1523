package authz

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Error classes of the grant model; callers map them with errors.Is.
var (
	// ErrInvalid means a role, grant, binding or policy file is malformed; the message names what.
	ErrInvalid = errors.New("invalid permission setting")
	// ErrForbidden means the caller lacks the privilege an operation needs.
	ErrForbidden = errors.New("forbidden")
	// ErrUnknownRole means a grant or binding names a role that does not exist.
	ErrUnknownRole = errors.New("unknown role")
	// ErrUnavailable means the grant store could not be read or written.
	ErrUnavailable = errors.New("grant store unavailable")
)

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
	Role      string    `json:"role"`
	Privilege Privilege `json:"privilege"`
	Effect    Effect    `json:"effect"`
	On        Securable `json:"on"`
	Source    string    `json:"source,omitempty"`
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

// scopeLine is the canonical text of what a grant gives, without the role: two principals holding the same
// grants through different roles have the same scope.
func (g Grant) scopeLine() string {
	return string(g.effect()) + " " + string(g.Privilege) + " ON " + g.On.String()
}

func hashID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return hex.EncodeToString(h[:16])
}

// maxNameLen bounds role names and subjects.
const maxNameLen = 256

func validName(what, s string) error {
	if s == "" || len(s) > maxNameLen || strings.TrimSpace(s) != s {
		return fmt.Errorf("%w: %s %q must be 1..%d characters without surrounding spaces", ErrInvalid, what, s, maxNameLen)
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
		return fmt.Errorf("%w: unknown privilege %q", ErrInvalid, g.Privilege)
	}
	if e := g.effect(); e != Allow && e != Deny {
		return fmt.Errorf("%w: effect %q must be ALLOW or DENY", ErrInvalid, g.Effect)
	}
	if err := g.On.Validate(); err != nil {
		return err
	}
	if g.Privilege == PrivProduce && g.On.Kind != SecRoot && g.On.Kind != SecEnvironment && g.On.Kind != SecNamespace {
		return fmt.Errorf("%w: PRODUCE is granted on ROOT, ENVIRONMENT or NAMESPACE, not %s", ErrInvalid, g.On.Kind)
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

// normalized returns the grant with defaults filled in (effect ALLOW, trimmed prefix).
func (g Grant) normalized() Grant {
	g.Effect = g.effect()
	g.On = g.On.normalized()
	return g
}
