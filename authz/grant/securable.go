package grant

import (
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authz"
)

// SecurableKind names a level of the securable hierarchy: ROOT > ENVIRONMENT > NAMESPACE > PREFIX > DATASET|JOB.
type SecurableKind string

// Securable kinds.
const (
	SecRoot        SecurableKind = "ROOT"        // everything, now and later
	SecEnvironment SecurableKind = "ENVIRONMENT" // every namespace the environment map assigns to Environment
	SecNamespace   SecurableKind = "NAMESPACE"   // every dataset and job in Namespace
	SecPrefix      SecurableKind = "PREFIX"      // datasets and jobs in Namespace whose name starts with Name on whole segments
	SecDataset     SecurableKind = "DATASET"     // one dataset (and its fields)
	SecJob         SecurableKind = "JOB"         // one job
)

// Securable is what a grant is on. Grants are inherited by everything below the securable, including nodes
// created after the grant.
type Securable struct {
	Kind        SecurableKind `json:"kind" yaml:"kind"`
	Environment string        `json:"environment,omitempty" yaml:"environment,omitempty"`
	Namespace   string        `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	Name        string        `json:"name,omitempty" yaml:"name,omitempty"`
}

// Root is the securable of everything.
func Root() Securable { return Securable{Kind: SecRoot} }

// Validate checks that exactly the fields of the kind are set.
func (s Securable) Validate() error {
	env, ns, nm := s.Environment != "", s.Namespace != "", s.Name != ""
	ok := false
	switch s.Kind {
	case SecRoot:
		ok = !env && !ns && !nm
	case SecEnvironment:
		ok = env && !ns && !nm
	case SecNamespace:
		ok = !env && ns && !nm
	case SecPrefix, SecDataset, SecJob:
		ok = !env && ns && nm
	default:
		return fmt.Errorf("%w: unknown securable kind %q", authz.ErrInvalid, s.Kind)
	}
	if !ok {
		return fmt.Errorf("%w: securable %s needs exactly %s", authz.ErrInvalid, s.Kind, fieldsOf(s.Kind))
	}
	if s.Kind == SecPrefix && trimSeparators(s.Name) == "" {
		return fmt.Errorf("%w: prefix %q has no segment", authz.ErrInvalid, s.Name)
	}
	return nil
}

func fieldsOf(k SecurableKind) string {
	switch k {
	case SecRoot:
		return "no field"
	case SecEnvironment:
		return "environment"
	case SecNamespace:
		return "namespace"
	default:
		return "namespace and name"
	}
}

// String is the canonical text of the securable, used in grant ids, fingerprints and audit records.
func (s Securable) String() string {
	switch s.Kind {
	case SecRoot:
		return "ROOT"
	case SecEnvironment:
		return "ENVIRONMENT:" + s.Environment
	case SecNamespace:
		return "NAMESPACE:" + s.Namespace
	default:
		return string(s.Kind) + ":" + s.Namespace + "|" + s.Name
	}
}

// Normalized trims trailing segment separators from a prefix, so "analytics.finance." grants what
// "analytics.finance" grants.
func (s Securable) Normalized() Securable {
	if s.Kind == SecPrefix {
		s.Name = trimSeparators(s.Name)
	}
	return s
}

// Name segments. Dataset and job names are split before every '.' and '/'; each segment keeps the separator
// that starts it, so "analytics.finance" covers "analytics.finance.orders" and "analytics.finance/x" but neither
// "analytics.finance_secret" nor "analytics/finance.orders".
func isSeparator(c byte) bool { return c == '.' || c == '/' }

func trimSeparators(s string) string {
	for s != "" && isSeparator(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// PrefixCovers reports whether a name prefix covers a name on whole segments.
func PrefixCovers(prefix, name string) bool {
	prefix = trimSeparators(prefix)
	if prefix == "" || !strings.HasPrefix(name, prefix) {
		return false
	}
	return len(name) == len(prefix) || isSeparator(name[len(prefix)])
}

// Segments yields the separator-led segments of a name without allocating (the "Name segments" rule above):
// "analytics.finance/x" yields "analytics", ".finance", "/x".
func Segments(name string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 1; i < len(name); i++ {
			if isSeparator(name[i]) {
				if !yield(name[start:i]) {
					return
				}
				start = i
			}
		}
		if name != "" {
			yield(name[start:])
		}
	}
}
