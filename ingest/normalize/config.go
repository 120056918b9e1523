package normalize

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Config maps namespace prefixes (compared after canonicalisation) to environments; the longest matching prefix
// wins, and a namespace no prefix matches belongs to DefaultEnv.
type Config struct {
	Environments map[string]string `yaml:"environments"`
	DefaultEnv   string            `yaml:"defaultEnv"`
}

// ConfigError names the configuration entry that is not usable.
type ConfigError struct {
	Key    string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("normalize: invalid config %s: %s", e.Key, e.Reason)
}

// Validate checks environment names and that every prefix can be canonicalised unambiguously.
func (c Config) Validate() error {
	if !validEnv(c.DefaultEnv) {
		return &ConfigError{Key: "defaultEnv", Reason: "must be a non-empty name of [a-z0-9_-]"}
	}
	for prefix, env := range c.Environments {
		if !validEnv(env) {
			return &ConfigError{Key: "environments[" + prefix + "]", Reason: "must be a non-empty name of [a-z0-9_-]"}
		}
	}
	_, err := c.prefixes()
	return err
}

type envPrefix struct {
	prefix string
	env    string
}

// prefixes canonicalises every configured prefix, rejects two spellings of one prefix with different
// environments, and orders them longest first.
func (c Config) prefixes() ([]envPrefix, error) {
	seen := map[string]string{}
	for raw, env := range c.Environments {
		p, err := canonicalPrefix(raw)
		if err != nil {
			return nil, &ConfigError{Key: "environments[" + raw + "]", Reason: err.Error()}
		}
		if other, ok := seen[p]; ok && other != env {
			return nil, &ConfigError{Key: "environments[" + raw + "]",
				Reason: fmt.Sprintf("canonical prefix %q is mapped to both %q and %q", p, other, env)}
		}
		seen[p] = env
	}
	out := make([]envPrefix, 0, len(seen))
	for p, env := range seen {
		out = append(out, envPrefix{prefix: p, env: env})
	}
	slices.SortFunc(out, func(a, b envPrefix) int {
		return cmp.Or(cmp.Compare(len(b.prefix), len(a.prefix)), cmp.Compare(a.prefix, b.prefix))
	})
	return out, nil
}

// canonicalPrefix canonicalises a prefix like a namespace, in the key form (KeyNamespace: without the default
// port, so "postgres://db" and "postgres://db:5432" both cover every port of host db, as they did before version 3
// wrote the default port); "scheme://" alone (every namespace of a platform) only has its scheme canonicalised.
func canonicalPrefix(raw string) (string, error) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok && rest == "" && validScheme(scheme) {
		return schemeAlias(strings.ToLower(scheme)) + "://", nil
	}
	u, err := parseNamespace("environment", raw)
	if err != nil {
		return "", err
	}
	return KeyNamespace(u.String()), nil
}

// environment returns the environment of a canonical namespace: the longest prefix that ends at a boundary,
// matched against the namespace's key form (the environment is part of the dataset key, so it must not change
// when the canonical form starts writing the default port).
// Answers are memoised per namespace (a deployment has few namespaces and every event repeats them; the scan and
// the key form cost ~0.7 µs per identifier with the benchmark's 24 prefixes), up to envCacheSize namespaces.
func (n *Normalizer) environment(ns string) string {
	if env, ok := n.envCache.Load(ns); ok {
		return env.(string)
	}
	env := n.scanEnvironment(ns)
	if n.envCached.Add(1) <= envCacheSize {
		n.envCache.Store(ns, env)
	}
	return env
}

// envCacheSize bounds the environment memo: namespaces past it are answered by the scan every time.
const envCacheSize = 16384

func (n *Normalizer) scanEnvironment(ns string) string {
	ns = KeyNamespace(ns)
	for _, p := range n.envs {
		if prefixMatches(p.prefix, ns) {
			return p.env
		}
	}
	return n.defaultEnv
}

// prefixMatches: ns equals the prefix, or continues it at a boundary. A prefix ending in a non-alphanumeric
// character ("s3://prod-", "postgres://") is a free prefix; otherwise the next character of ns must be "/", ":"
// or "," so that "postgres://db" matches "postgres://db:6543" and "postgres://db/x" but not "postgres://db2".
func prefixMatches(prefix, ns string) bool {
	if !strings.HasPrefix(ns, prefix) {
		return false
	}
	if len(ns) == len(prefix) {
		return true
	}
	last := prefix[len(prefix)-1]
	if !isAlpha(last) && !isDigit(last) {
		return true
	}
	return strings.IndexByte("/:,", ns[len(prefix)]) >= 0
}

func validEnv(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !isDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}
