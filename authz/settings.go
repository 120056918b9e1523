package authz

import (
	"fmt"
	"slices"
	"strings"
)

// HiddenMode says how an answer shows neighbours the caller may not see.
type HiddenMode string

// Hidden-neighbour modes (DESIGN.md, Permissions).
const (
	// HiddenOmit leaves no trace: graphs differing only in hidden parts give identical answers.
	HiddenOmit HiddenMode = "OMIT"
	// HiddenRedact shows one opaque placeholder per visible node and direction with hidden neighbours.
	HiddenRedact HiddenMode = "REDACT"
)

// Settings are the policy-wide options that change what a principal is shown; they are part of every scope
// fingerprint.
type Settings struct {
	HiddenNeighbours    HiddenMode `yaml:"hiddenNeighbours"`
	SensitiveNamespaces []string   `yaml:"sensitiveNamespaces"`
	SensitiveTags       []string   `yaml:"sensitiveTags"`
}

// Validate checks the mode.
func (s Settings) Validate() error {
	switch s.Normalized().HiddenNeighbours {
	case HiddenOmit, HiddenRedact:
		return nil
	}
	return fmt.Errorf("%w: hiddenNeighbours %q must be OMIT or REDACT", ErrInvalid, s.HiddenNeighbours)
}

// Normalized defaults the mode to OMIT and sorts the lists.
func (s Settings) Normalized() Settings {
	if s.HiddenNeighbours == "" {
		s.HiddenNeighbours = HiddenOmit
	}
	s.SensitiveNamespaces = sortedUnique(s.SensitiveNamespaces)
	s.SensitiveTags = sortedUnique(s.SensitiveTags)
	return s
}

func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// Sensitive reports whether a node is sensitive: its namespace is marked sensitive, or it carries a sensitive
// tag. Accesses to sensitive nodes are audited. A tag is sensitive when its class is listed, or a class above
// it in the dotted hierarchy (`pii` makes `pii.email` sensitive); the class of a stored tag `[field:]key[=value]`
// is its key, lower case, so a field's tag and a tag with a value count like the bare key (ADR 0042).
func (s Settings) Sensitive(namespace string, tags []string) bool {
	if slices.Contains(s.SensitiveNamespaces, namespace) {
		return true
	}
	for _, t := range tags {
		if slices.Contains(s.SensitiveTags, t) || s.sensitiveClass(tagClass(t)) {
			return true
		}
	}
	return false
}

// tagClass is the class of a stored tag: the key (after the last ':' before any '='), lower case.
func tagClass(raw string) string {
	head, _, _ := strings.Cut(raw, "=")
	if i := strings.LastIndexByte(head, ':'); i >= 0 {
		head = head[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(head))
}

// sensitiveClass reports whether class or a class above it is a listed sensitive tag (compared lower case).
func (s Settings) sensitiveClass(class string) bool {
	for class != "" {
		if slices.ContainsFunc(s.SensitiveTags, func(t string) bool { return strings.EqualFold(t, class) }) {
			return true
		}
		i := strings.LastIndexByte(class, '.')
		if i < 0 {
			break
		}
		class = class[:i]
	}
	return false
}
