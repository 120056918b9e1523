package authz

import (
	"fmt"
	"slices"
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
// tag. Accesses to sensitive nodes are audited.
func (s Settings) Sensitive(namespace string, tags []string) bool {
	if slices.Contains(s.SensitiveNamespaces, namespace) {
		return true
	}
	for _, t := range tags {
		if slices.Contains(s.SensitiveTags, t) {
			return true
		}
	}
	return false
}
