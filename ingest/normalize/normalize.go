// Package normalize canonicalises dataset and job identities exactly as DESIGN.md "Identity" says, so that the
// projector and the query side compute the same key from whatever a producer or a user typed.
//
// Invariants: canonicalisation is deterministic, idempotent (canonicalising a canonical identity changes
// nothing) and purely syntactic: it never merges two identities by similarity, never consults a catalog, and
// rejects with a typed *IdentityError what it cannot canonicalise. docs/adr/0005-identity-canonicalisation.md
// lists every rule, and what is deliberately not folded.
package normalize

import (
	"sync"
	"sync/atomic"
)

// Version identifies the canonicalisation rules. Bump it whenever a rule changes (a new default port, alias
// or case fold), since identities computed under different versions may differ; the projector records it with
// what it writes (DESIGN.md "Recovery and replay": a new normaliser rebuilds a shadow projection). normalize-2
// (projection version 3) writes the default port where OpenLineage's naming spec does (ADR 0026).
const Version = "normalize-2"

// Normalizer canonicalises identities and maps namespaces to environments. Its configuration is immutable
// (it only memoises environments) and it is safe for concurrent use.
type Normalizer struct {
	envs       []envPrefix // canonical prefixes, longest first
	defaultEnv string
	envCache   sync.Map     // canonical namespace -> environment (environment)
	envCached  atomic.Int64 // namespaces stored in envCache
}

// New validates the configuration and canonicalises its namespace prefixes.
func New(c Config) (*Normalizer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	envs, err := c.prefixes()
	if err != nil {
		return nil, err
	}
	return &Normalizer{envs: envs, defaultEnv: c.DefaultEnv}, nil
}

// Dataset returns the environment and the canonical (namespace, name) of a dataset identity.
func (n *Normalizer) Dataset(namespace, name string) (env, ns, nm string, err error) {
	u, err := parseNamespace(EntityDataset, namespace)
	if err != nil {
		return "", "", "", err
	}
	nm, err = canonicalName(EntityDataset, u.scheme, name)
	if err != nil {
		return "", "", "", err
	}
	ns = u.String()
	if err := checkCanonical(EntityDataset, ns, nm); err != nil {
		return "", "", "", err
	}
	return n.environment(ns), ns, nm, nil
}

// Job returns the canonical (namespace, name) of a job. URI-like job namespaces get the namespace rules;
// opaque ones ("airflow-prod") are kept as sent but for trailing slashes. Job names are kept exactly.
func (n *Normalizer) Job(namespace, name string) (ns, nm string, err error) {
	u, err := parseNamespace(EntityJob, namespace)
	if err != nil {
		return "", "", err
	}
	if err := checkText(EntityJob, PartName, name); err != nil {
		return "", "", err
	}
	ns = u.String()
	if err := checkCanonical(EntityJob, ns, name); err != nil {
		return "", "", err
	}
	return ns, name, nil
}

// checkCanonical re-checks the canonical form: removing slashes can expose white space ("s3://b/x /"), and a
// canonical identity must itself be acceptable, or canonicalisation would not be idempotent.
func checkCanonical(entity, ns, nm string) error {
	if err := checkText(entity, PartNamespace, ns); err != nil {
		return err
	}
	return checkText(entity, PartName, nm)
}

// Environment is the environment a canonical namespace maps to (longest configured prefix, else the default).
// Permissions use it so an ENVIRONMENT grant covers datasets and jobs alike.
func (n *Normalizer) Environment(canonicalNamespace string) string {
	return n.environment(canonicalNamespace)
}

// Field checks a field path (a schema facet's flattened field name, a column-lineage field) by the rules the
// projector's Field nodes need: not empty, at most MaxFieldBytes, valid UTF-8, no control characters. Paths are
// otherwise kept exactly as sent: white space is legal inside a quoted SQL identifier.
func Field(path string) error {
	if path == "" {
		return identityErr(EntityField, PartField, RuleEmpty, path, "the field is empty")
	}
	return checkChars(EntityField, PartField, path)
}
