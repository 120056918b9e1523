package authz

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// PolicyFileVersion is the policy file format this binary reads.
const PolicyFileVersion = 1

// PolicyFile is the YAML policy loaded at start (docs/permissions.md shows an example). What it declares is
// created with source "file"; what an earlier file declared and this one no longer does is removed. Grants made
// through the management API are left alone.
type PolicyFile struct {
	Version          int           `yaml:"version"`
	HiddenNeighbours HiddenMode    `yaml:"hiddenNeighbours"`
	Sensitive        FileSensitive `yaml:"sensitive"`
	Roles            []FileRole    `yaml:"roles"`
	Bindings         []FileBinding `yaml:"bindings"`
	// Source tags what this file creates (default "file"); a sync removes only what carries the same tag.
	Source string `yaml:"-"`
}

func (f PolicyFile) source() string {
	if f.Source == "" {
		return SourceFile
	}
	return f.Source
}

// FileSensitive marks namespaces and tags sensitive.
type FileSensitive struct {
	Namespaces []string `yaml:"namespaces"`
	Tags       []string `yaml:"tags"`
}

// FileRole is a role with its grants.
type FileRole struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Grants      []FileGrant `yaml:"grants"`
}

// FileGrant grants (or denies) privileges on one securable.
type FileGrant struct {
	Privileges []Privilege   `yaml:"privileges"`
	Effect     Effect        `yaml:"effect"`
	On         FileSecurable `yaml:"on"`
}

// FileSecurable names a securable: `all: true`, `environment`, `namespace` alone, or `namespace` with exactly one
// of `prefix`, `dataset`, `job`.
type FileSecurable struct {
	All         bool   `yaml:"all"`
	Environment string `yaml:"environment"`
	Namespace   string `yaml:"namespace"`
	Prefix      string `yaml:"prefix"`
	Dataset     string `yaml:"dataset"`
	Job         string `yaml:"job"`
}

// FileBinding binds subjects to a role.
type FileBinding struct {
	Role     string   `yaml:"role"`
	Subjects []string `yaml:"subjects"`
}

// LoadPolicyFile reads and validates a policy file; unknown keys are errors.
func LoadPolicyFile(path string) (PolicyFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PolicyFile{}, fmt.Errorf("policy file: %w", err)
	}
	return ParsePolicyFile(b)
}

// ParsePolicyFile parses and validates a policy file's content.
func ParsePolicyFile(b []byte) (PolicyFile, error) {
	var f PolicyFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return PolicyFile{}, fmt.Errorf("%w: policy file: %w", ErrInvalid, err)
	}
	if f.Version != PolicyFileVersion {
		return PolicyFile{}, fmt.Errorf("%w: policy file version %d, this binary reads %d", ErrInvalid, f.Version, PolicyFileVersion)
	}
	if err := f.Settings().Validate(); err != nil {
		return PolicyFile{}, err
	}
	if _, err := f.State(nil); err != nil {
		return PolicyFile{}, err
	}
	return f, nil
}

// Settings returns the policy-wide settings the file declares.
func (f PolicyFile) Settings() Settings {
	return Settings{HiddenNeighbours: f.HiddenNeighbours, SensitiveNamespaces: f.Sensitive.Namespaces,
		SensitiveTags: f.Sensitive.Tags}.normalized()
}

// State returns the roles, grants and bindings the file declares (source "file"), securables canonicalised.
func (f PolicyFile) State(canon Canonicalizer) (Snapshot, error) {
	var s Snapshot
	declared := map[string]bool{}
	for _, r := range f.Roles {
		role := Role{Name: r.Name, Description: r.Description, Source: f.source()}
		if err := role.Validate(); err != nil {
			return s, err
		}
		declared[r.Name] = true
		s.Roles = append(s.Roles, role)
		for i, fg := range r.Grants {
			gs, err := fg.grants(r.Name, f.source(), canon)
			if err != nil {
				return s, fmt.Errorf("role %s grant %d: %w", r.Name, i+1, err)
			}
			s.Grants = append(s.Grants, gs...)
		}
	}
	for _, b := range f.Bindings {
		if !declared[b.Role] {
			return s, fmt.Errorf("%w: binding of role %q that the file does not declare", ErrInvalid, b.Role)
		}
		for _, sub := range b.Subjects {
			rb := RoleBinding{Subject: sub, Role: b.Role, Source: f.source()}
			if err := rb.Validate(); err != nil {
				return s, err
			}
			s.Bindings = append(s.Bindings, rb)
		}
	}
	return s, nil
}

func (fg FileGrant) grants(role, source string, canon Canonicalizer) ([]Grant, error) {
	on, err := fg.On.securable()
	if err != nil {
		return nil, err
	}
	if on, err = CanonicalSecurable(canon, on); err != nil {
		return nil, err
	}
	if len(fg.Privileges) == 0 {
		return nil, fmt.Errorf("%w: no privileges", ErrInvalid)
	}
	var out []Grant
	for _, p := range fg.Privileges {
		g := Grant{Role: role, Privilege: p, Effect: fg.Effect, On: on, Source: source}.normalized()
		if err := g.Validate(); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (fs FileSecurable) securable() (Securable, error) {
	n := 0
	s := Securable{Kind: SecNamespace, Namespace: fs.Namespace}
	for _, c := range []struct {
		v    string
		kind SecurableKind
	}{{fs.Prefix, SecPrefix}, {fs.Dataset, SecDataset}, {fs.Job, SecJob}} {
		if c.v != "" {
			n++
			s.Kind, s.Name = c.kind, c.v
		}
	}
	switch {
	case fs.All && (fs.Environment != "" || fs.Namespace != "" || n > 0):
		return s, fmt.Errorf("%w: `all: true` takes no other field", ErrInvalid)
	case fs.All:
		return Root(), nil
	case fs.Environment != "" && (fs.Namespace != "" || n > 0):
		return s, fmt.Errorf("%w: `environment` takes no other field", ErrInvalid)
	case fs.Environment != "":
		return Securable{Kind: SecEnvironment, Environment: fs.Environment}, nil
	case n > 1:
		return s, fmt.Errorf("%w: at most one of prefix, dataset, job", ErrInvalid)
	}
	return s, s.normalized().Validate()
}

// policyFileActor is the principal file syncs are recorded under.
const policyFileActor = "policy-file"

// SyncPolicyFile makes the grant state match the file: it creates what the file declares and is missing, and
// removes file-sourced roles, grants and bindings the file no longer declares, in one transaction. Applying the
// same file twice changes nothing and does not bump the epoch. The sync is audited as one record.
func (m *Manager) SyncPolicyFile(ctx context.Context, f PolicyFile) (ApplyResult, error) {
	want, err := f.State(m.canon)
	if err != nil {
		return ApplyResult{}, err
	}
	have, err := m.store.Load(ctx)
	if err != nil {
		return ApplyResult{}, err
	}
	changes := diffState(have, want, f.source())
	if len(changes) == 0 {
		return ApplyResult{Epoch: have.Epoch}, nil
	}
	caller := Principal{Subject: policyFileActor, Kind: "system"}
	res, err := m.store.Apply(ctx, caller.Subject, changes)
	if err != nil {
		return res, err
	}
	if len(res.Changed) > 0 {
		if err := m.audit.Audit(ctx, m.record(caller, "syncPolicyFile", DecisionAllow, "", res.Changed, res.Epoch)); err != nil {
			return res, err
		}
	}
	return res, m.policy.Refresh(ctx)
}

// diffState lists the changes that turn have's file-sourced state into want: additions first (roles, then
// grants and bindings), then removals (grants, bindings, then roles).
func diffState(have, want Snapshot, source string) []Change {
	var add, remove []Change
	haveRoles, wantRoles := map[string]bool{}, map[string]bool{}
	for _, r := range have.Roles {
		haveRoles[r.Name] = true
	}
	for _, r := range want.Roles {
		wantRoles[r.Name] = true
		if !haveRoles[r.Name] {
			add = append(add, Change{Op: OpCreateRole, Role: &r})
		}
	}
	haveGrants, wantGrants := map[string]bool{}, map[string]bool{}
	for _, g := range have.Grants {
		haveGrants[g.normalized().ID()] = true
	}
	for _, g := range want.Grants {
		wantGrants[g.ID()] = true
		if !haveGrants[g.ID()] {
			add = append(add, Change{Op: OpGrant, Grant: &g})
		}
	}
	haveBind, wantBind := map[string]bool{}, map[string]bool{}
	for _, b := range have.Bindings {
		haveBind[b.ID()] = true
	}
	for _, b := range want.Bindings {
		wantBind[b.ID()] = true
		if !haveBind[b.ID()] {
			add = append(add, Change{Op: OpBindRole, Binding: &b})
		}
	}
	for _, g := range have.Grants {
		if g.Source == source && !wantGrants[g.normalized().ID()] {
			remove = append(remove, Change{Op: OpRevoke, Grant: &g})
		}
	}
	for _, b := range have.Bindings {
		if b.Source == source && !wantBind[b.ID()] {
			remove = append(remove, Change{Op: OpUnbindRole, Binding: &b})
		}
	}
	for _, r := range have.Roles {
		if r.Source == source && !wantRoles[r.Name] {
			remove = append(remove, Change{Op: OpDeleteRole, Role: &r})
		}
	}
	return append(add, remove...)
}
