package gen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Platforms as the OpenLineage naming conventions name them.
const (
	PlatformPostgres  = "postgres"
	PlatformS3        = "s3"
	PlatformKafka     = "kafka"
	PlatformSnowflake = "snowflake"
)

// Integrations (producers) the generator imitates.
const (
	IntegrationAirflow = "AIRFLOW"
	IntegrationSpark   = "SPARK"
	IntegrationDBT     = "DBT"
	IntegrationFlink   = "FLINK"
)

// Environments.
const (
	EnvProd    = "prod"
	EnvStaging = "staging"
)

const hostsPerPlatform = 3 // namespaces per platform and environment

var (
	domains  = []string{"sales", "finance", "marketing", "crm", "billing", "logistics", "product", "support", "risk", "ads", "inventory", "hr"}
	entities = []string{"orders", "customers", "payments", "invoices", "sessions", "events", "shipments", "accounts", "refunds", "clicks", "subscriptions", "tickets", "products", "leads"}
	layerTag = []string{"raw", "stg", "int", "fct", "rpt"}
)

// producerURI is the producer of an integration, shaped like the real OpenLineage integrations'.
func producerURI(integration string) string {
	switch integration {
	case IntegrationAirflow:
		return "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/airflow"
	case IntegrationSpark:
		return "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark"
	case IntegrationDBT:
		return "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/dbt"
	default:
		return "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/flink"
	}
}

func hostPrefix(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "-"
}

// Identifiers are emitted in Headwater's canonical form (docs/adr/0005-identity-canonicalisation.md): default
// ports written as OpenLineage's naming spec writes them (docs/adr/0026-identity-in-answers.md), Snowflake names
// upper-case. The history loader writes them as they are, so loaded data and
// projected events agree on every key.

// datasetNamespace is the namespace of the k-th host of a platform in an environment.
func datasetNamespace(prefix, platform, env string, k int) string {
	p := hostPrefix(prefix)
	switch platform {
	case PlatformPostgres:
		return fmt.Sprintf("postgres://%spg-%s-%d.db.internal:5432", p, env, k)
	case PlatformS3:
		return fmt.Sprintf("s3://%s%s-lake-%d", p, env, k)
	case PlatformKafka:
		return fmt.Sprintf("kafka://%skafka-%s-%d.internal:9092", p, env, k)
	default:
		return fmt.Sprintf("snowflake://%sacme-%s%d", p, env, k)
	}
}

// datasetName follows the platform's naming convention; the id keeps names unique.
func datasetName(platform string, layer, id int, r *rand.Rand) string {
	d, e, tag := pick(r, domains), pick(r, entities), layerTag[layer]
	switch platform {
	case PlatformPostgres:
		return fmt.Sprintf("%sdb.public.%s_%s_%05d", d, tag, e, id)
	case PlatformS3:
		return fmt.Sprintf("warehouse/%s/%s_%s_%05d", d, tag, e, id)
	case PlatformKafka:
		return fmt.Sprintf("%s.%s.%s.v1.%05d", d, tag, e, id)
	default:
		return strings.ToUpper(fmt.Sprintf("analytics.%s.%s_%s_%05d", d, tag, e, id))
	}
}

func jobNamespace(prefix, integration, env string) string {
	names := map[string]string{IntegrationAirflow: "airflow", IntegrationSpark: "spark", IntegrationDBT: "dbt", IntegrationFlink: "flink"}
	return hostPrefix(prefix) + names[integration] + "-" + env
}

// JobNamespaces lists every job namespace a world with this prefix can use.
func JobNamespaces(prefix string) []string {
	var out []string
	for _, in := range []string{IntegrationAirflow, IntegrationSpark, IntegrationDBT, IntegrationFlink} {
		for _, env := range []string{EnvProd, EnvStaging} {
			out = append(out, jobNamespace(prefix, in, env))
		}
	}
	return out
}

// DatasetNamespaces lists every dataset namespace a world with this prefix can use.
func DatasetNamespaces(prefix string) []string {
	var out []string
	for _, pl := range []string{PlatformPostgres, PlatformS3, PlatformKafka, PlatformSnowflake} {
		for _, env := range []string{EnvProd, EnvStaging} {
			for k := range hostsPerPlatform {
				out = append(out, datasetNamespace(prefix, pl, env, k))
			}
		}
	}
	return out
}

// ProducerURI is the producer URI the generator writes for an integration.
func ProducerURI(integration string) string { return producerURI(integration) }

// Environments maps every dataset namespace of a prefix to its environment, in the shape of the service's
// namespace-to-environment configuration (exact namespaces, so no prefix rule can misfire).
func Environments(prefix string) map[string]string {
	out := map[string]string{}
	for _, pl := range []string{PlatformPostgres, PlatformS3, PlatformKafka, PlatformSnowflake} {
		for _, env := range []string{EnvProd, EnvStaging} {
			for k := range hostsPerPlatform {
				out[datasetNamespace(prefix, pl, env, k)] = env
			}
		}
	}
	return out
}
