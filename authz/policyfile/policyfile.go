// Package policyfile reads the YAML policy file applied at start: roles with their grants, bindings, sensitive
// namespaces and tags, and the hidden-neighbour mode. It parses and validates (unknown keys are errors) and says
// what grant state the file declares; manage.Manager.SyncPolicyFile makes the stored state match it.
package policyfile

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/grant"
)

// PolicyFileVersion is the policy file format this binary reads.
const PolicyFileVersion = 1

// PolicyFile is the YAML policy loaded at start (docs/permissions.md shows an example). What it declares is
// created with source "file"; what an earlier file declared and this one no longer does is removed. Grants made
// through the management API are left alone.
type PolicyFile struct {
	Version          int              `yaml:"version"`
	HiddenNeighbours authz.HiddenMode `yaml:"hiddenNeighbours"`
	Sensitive        FileSensitive    `yaml:"sensitive"`
	Roles            []FileRole       `yaml:"roles"`
	Bindings         []FileBinding    `yaml:"bindings"`
	// Source tags what this file creates (default "file"); a sync removes only what carries the same tag.
	Source string `yaml:"-"`
}

// SourceTag is the tag of what this file creates: Source, or "file" when empty.
func (f PolicyFile) SourceTag() string {
	if f.Source == "" {
		return grant.SourceFile
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
	Privileges []authz.Privilege `yaml:"privileges"`
	Effect     grant.Effect      `yaml:"effect"`
	On         FileSecurable     `yaml:"on"`
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
		return PolicyFile{}, fmt.Errorf("%w: policy file: %w", authz.ErrInvalid, err)
	}
	if f.Version != PolicyFileVersion {
		return PolicyFile{}, fmt.Errorf("%w: policy file version %d, this binary reads %d", authz.ErrInvalid, f.Version, PolicyFileVersion)
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
func (f PolicyFile) Settings() authz.Settings {
	return authz.Settings{HiddenNeighbours: f.HiddenNeighbours, SensitiveNamespaces: f.Sensitive.Namespaces,
		SensitiveTags: f.Sensitive.Tags}.Normalized()
}

// State returns the roles, grants and bindings the file declares (source "file"), securables canonicalised.
func (f PolicyFile) State(canon grant.Canonicalizer) (grant.Snapshot, error) {
	var s grant.Snapshot
	declared := map[string]bool{}
	for _, r := range f.Roles {
		role := grant.Role{Name: r.Name, Description: r.Description, Source: f.SourceTag()}
		if err := role.Validate(); err != nil {
			return s, err
		}
		declared[r.Name] = true
		s.Roles = append(s.Roles, role)
		for i, fg := range r.Grants {
			gs, err := fg.grants(r.Name, f.SourceTag(), canon)
			if err != nil {
				return s, fmt.Errorf("role %s grant %d: %w", r.Name, i+1, err)
			}
			s.Grants = append(s.Grants, gs...)
		}
	}
	for _, b := range f.Bindings {
		if !declared[b.Role] {
			return s, fmt.Errorf("%w: binding of role %q that the file does not declare", authz.ErrInvalid, b.Role)
		}
		for _, sub := range b.Subjects {
			rb := grant.RoleBinding{Subject: sub, Role: b.Role, Source: f.SourceTag()}
			if err := rb.Validate(); err != nil {
				return s, err
			}
			s.Bindings = append(s.Bindings, rb)
		}
	}
	return s, nil
}

func (fg FileGrant) grants(role, source string, canon grant.Canonicalizer) ([]grant.Grant, error) {
	on, err := fg.On.securable()
	if err != nil {
		return nil, err
	}
	if on, err = grant.CanonicalSecurable(canon, on); err != nil {
		return nil, err
	}
	if len(fg.Privileges) == 0 {
		return nil, fmt.Errorf("%w: no privileges", authz.ErrInvalid)
	}
	var out []grant.Grant
	for _, p := range fg.Privileges {
		g := grant.Grant{Role: role, Privilege: p, Effect: fg.Effect, On: on, Source: source}.Normalized()
		if err := g.Validate(); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func (fs FileSecurable) securable() (grant.Securable, error) {
	n := 0
	s := grant.Securable{Kind: grant.SecNamespace, Namespace: fs.Namespace}
	for _, c := range []struct {
		v    string
		kind grant.SecurableKind
	}{{fs.Prefix, grant.SecPrefix}, {fs.Dataset, grant.SecDataset}, {fs.Job, grant.SecJob}} {
		if c.v != "" {
			n++
			s.Kind, s.Name = c.kind, c.v
		}
	}
	switch {
	case fs.All && (fs.Environment != "" || fs.Namespace != "" || n > 0):
		return s, fmt.Errorf("%w: `all: true` takes no other field", authz.ErrInvalid)
	case fs.All:
		return grant.Root(), nil
	case fs.Environment != "" && (fs.Namespace != "" || n > 0):
		return s, fmt.Errorf("%w: `environment` takes no other field", authz.ErrInvalid)
	case fs.Environment != "":
		return grant.Securable{Kind: grant.SecEnvironment, Environment: fs.Environment}, nil
	case n > 1:
		return s, fmt.Errorf("%w: at most one of prefix, dataset, job", authz.ErrInvalid)
	}
	return s, s.Normalized().Validate()
}
