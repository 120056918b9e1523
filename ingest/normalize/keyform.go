package normalize

import "strings"

// KeyNamespace is the form of a canonical namespace that node keys hash and environment prefixes match: the
// canonical namespace without its scheme's default port. It is the canonical form of projection versions 1 and 2,
// which dropped the default port; version 3 writes it (portWritten) but keeps hashing this form, so a dataset or job
// keeps its key, its public id and its environment across the change, whether it is upgraded in place or rebuilt
// from the archive (docs/adr/0026-identity-in-answers.md). KeyNamespace is one-to-one on canonical namespaces:
// within a scheme that writes its default port every host carries a port, so removing the default one loses
// nothing. The argument must be canonical (Normalizer.Dataset or Job made it); anything else is returned unchanged
// or stripped by the same textual rule.
func KeyNamespace(canonical string) string {
	scheme, rest, ok := strings.Cut(canonical, "://")
	def := defaultPort(scheme)
	if !ok || def == "" || !portWritten(scheme) || isAzureStore(scheme) {
		return canonical
	}
	authority, path := splitAuthority(rest)
	hosts := strings.Split(authority, ",")
	for i, h := range hosts {
		hosts[i] = strings.TrimSuffix(h, ":"+def)
	}
	return scheme + "://" + strings.Join(hosts, ",") + path
}

// CanonicalNamespace canonicalises a dataset namespace alone, by the rules Normalizer.Dataset applies to it. It
// reads namespaces stored by an earlier rule set in today's form (a version-2 event payload's "postgres://db" is
// "postgres://db:5432"): canonicalisation is idempotent, so a namespace already canonical under these rules is
// returned unchanged.
func CanonicalNamespace(ns string) (string, error) {
	u, err := parseNamespace(EntityDataset, ns)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}
