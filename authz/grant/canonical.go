package grant

import (
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authz"
)

// Canonicalizer canonicalises identities exactly as events are (normalize.Normalizer satisfies it), so a grant
// on what a user typed matches what producers sent.
type Canonicalizer interface {
	Dataset(namespace, name string) (env, ns, nm string, err error)
	Job(namespace, name string) (ns, nm string, err error)
}

// CanonicalSecurable canonicalises a securable's namespace and name: URI-like namespaces ("scheme://...") by
// the dataset rules, other namespaces and JOB names by the job rules. canon nil returns s unchanged.
func CanonicalSecurable(canon Canonicalizer, s Securable) (Securable, error) {
	if canon == nil || s.Namespace == "" {
		return s, nil
	}
	name := s.Name
	if name == "" {
		name = "x" // a namespace alone: canonicalise it with a placeholder name
	}
	var ns, nm string
	var err error
	if s.Kind == SecJob || !strings.Contains(s.Namespace, "://") {
		ns, nm, err = canon.Job(s.Namespace, name)
	} else {
		_, ns, nm, err = canon.Dataset(s.Namespace, name)
	}
	if err != nil {
		return s, fmt.Errorf("%w: securable %s: %w", authz.ErrInvalid, s, err)
	}
	s.Namespace = ns
	if s.Name != "" {
		s.Name = nm
	}
	return s.Normalized(), nil
}
