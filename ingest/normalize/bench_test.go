package normalize

import (
	"fmt"
	"testing"
)

// benchNormalizer has the benchmark's environment map: 24 prefixes (loadtest: hwload envs for one world).
func benchNormalizer(b *testing.B) *Normalizer {
	envs := map[string]string{}
	for i := range 3 {
		for _, e := range []string{"prod", "staging"} {
			envs[fmt.Sprintf("kafka://w-kafka-%s-%d.internal:9092", e, i)] = e
			envs[fmt.Sprintf("postgres://w-pg-%s-%d.db.internal:5432", e, i)] = e
			envs[fmt.Sprintf("s3://w-%s-lake-%d", e, i)] = e
			envs[fmt.Sprintf("snowflake://w-acme-%s%d", e, i)] = e
		}
	}
	n, err := New(Config{Environments: envs, DefaultEnv: "prod"})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkDataset normalises a dataset identity as the projector does for every input and output.
func BenchmarkDataset(b *testing.B) {
	n := benchNormalizer(b)
	for i := range b.N {
		if _, _, _, err := n.Dataset("postgres://w-pg-staging-2.db.internal:5432", fmt.Sprintf("db.schema.t%d", i%512)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvironment is the prefix lookup alone.
func BenchmarkEnvironment(b *testing.B) {
	n := benchNormalizer(b)
	for range b.N {
		_ = n.environment("postgres://w-pg-staging-2.db.internal:5432")
	}
}
