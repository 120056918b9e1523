package normalize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fragments are the pieces the generator assembles identities from: valid, odd and invalid alike.
type fragments struct {
	schemes, hosts, paths, names, bare []string
}

func newFragments() fragments {
	return fragments{
		schemes: []string{"postgres", "POSTGRESQL", "s3a", "S3", "gs", "abfss", "hdfs", "file", "kafka", "snowflake",
			"redshift", "hive", "Trino", "mssql", "https", "bigquery", "x-custom", "1bad", ""},
		hosts: []string{"db", "DB.Internal", "b1:9092,B2:9093", "[FE80::1]", "c@Acct.dfs.core.windows.net",
			"u:p@host", "", "host:05432", "h:0", "h:65535", "acme-PROD", "a b", "ä"},
		paths: []string{"", "/", "//", "/Prefix/", "/a/b", "?q=1", "/x /"},
		names: []string{"t", "a.b.c", "Sales.Public.Orders", `db."Mixed.Case".t`, "/warehouse/t/", "//k//", "///",
			"", " x", "x /", "clickstream/2026/03", "ÄÖ.ß", "a\"b.c", "İstanbul.Ω"},
		bare: []string{"BigQuery", "file", "FILE/", "airflow-prod", "arn:aws:glue:eu-west-1:1", "ns//"},
	}
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

func (f fragments) namespace(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return pick(r, f.bare)
	}
	return pick(r, f.schemes) + "://" + pick(r, f.hosts) + pick(r, f.paths)
}

// TestDatasetIdempotent: whenever Dataset accepts an identity, its canonical form is accepted and maps to itself
// and to the same environment.
func TestDatasetIdempotent(t *testing.T) {
	n := newTestNormalizer(t)
	r := rand.New(rand.NewPCG(20260301, 1))
	frag := newFragments()
	const cases = 20000
	accepted := 0
	for range cases {
		ns, nm := frag.namespace(r), pick(r, frag.names)
		if r.IntN(4) == 0 {
			nm = strings.Repeat("/", r.IntN(3)) + nm + strings.Repeat("/", r.IntN(3))
		}
		assertIdempotent(t, n, ns, nm, &accepted)
	}
	if accepted < cases/4 {
		t.Fatalf("generator too hostile: only %d of %d accepted", accepted, cases)
	}
}

func assertIdempotent(t *testing.T, n *Normalizer, ns, nm string, accepted *int) {
	t.Helper()
	env, cns, cnm, err := n.Dataset(ns, nm)
	if err != nil {
		return
	}
	*accepted++
	env2, ns2, nm2, err := n.Dataset(cns, cnm)
	if err != nil || env2 != env || ns2 != cns || nm2 != cnm {
		t.Fatalf("not idempotent: (%q, %q) -> (%q, %q, %q) -> (%q, %q, %q, %v)", ns, nm, env, cns, cnm, env2, ns2, nm2, err)
	}
	// The key form (ADR 0026) loses nothing: it canonicalises back to the canonical namespace, in the same environment.
	if k := KeyNamespace(cns); k != cns {
		if back, err := CanonicalNamespace(k); err != nil || back != cns || n.Environment(k) != env {
			t.Fatalf("key form %q of %q canonicalises to %q (%v), environment %q want %q", k, cns, back, err, n.Environment(k), env)
		}
	}
	jns, jnm, err := n.Job(ns, nm)
	if err != nil {
		return
	}
	jns2, jnm2, err := n.Job(jns, jnm)
	if err != nil || jns2 != jns || jnm2 != jnm {
		t.Fatalf("Job not idempotent: (%q, %q) -> (%q, %q) -> (%q, %q, %v)", ns, nm, jns, jnm, jns2, jnm2, err)
	}
}

// FuzzDatasetIdempotent explores beyond the fragment generator.
func FuzzDatasetIdempotent(f *testing.F) {
	f.Add("POSTGRES://DB:5432/", "a.b.c")
	f.Add("s3a://B", "//k//")
	f.Add("snowflake://x", `a."B.c".d`)
	f.Add("file", "///")
	n := newTestNormalizer(f)
	f.Fuzz(func(t *testing.T, ns, nm string) {
		var accepted int
		assertIdempotent(t, n, ns, nm, &accepted)
	})
}
