package normalize

import (
	"errors"
	"strings"
	"testing"
)

func newTestNormalizer(t testing.TB) *Normalizer {
	t.Helper()
	n, err := New(Config{
		DefaultEnv: "prod",
		Environments: map[string]string{
			"postgres://pg-staging.internal:5432": "staging",
			"S3A://Staging-":                      "staging",
			"s3://staging-sandbox":                "dev",
			"kafka://":                            "streaming",
			"snowflake://acme-dev":                "dev",
		},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return n
}

func TestDatasetCanonical(t *testing.T) {
	n := newTestNormalizer(t)
	tests := []struct {
		name         string
		ns, nm       string
		env, wNS, wN string
	}{
		{"scheme and host lower-case", "POSTGRES://PG-Sales.Internal:6543", "sales.public.Orders", "prod", "postgres://pg-sales.internal:6543", "sales.public.Orders"},
		{"postgres default port kept", "postgres://db:5432", "a.b.c", "prod", "postgres://db:5432", "a.b.c"},
		{"postgres default port added (issue 14 item 6)", "postgres://warehouse", "a.b.c", "prod", "postgres://warehouse:5432", "a.b.c"},
		{"hive default port added (issue 14 item 6)", "hive://localhost", "default.t", "prod", "hive://localhost:9083", "default.t"},
		{"hive default port kept (issue 14 item 6)", "hive://localhost:9083", "default.t", "prod", "hive://localhost:9083", "default.t"},
		{"mysql default port added", "mysql://db", "shop.orders", "prod", "mysql://db:3306", "shop.orders"},
		{"sqlserver default port added", "sqlserver://sql01", "db.dbo.T", "prod", "sqlserver://sql01:1433", "db.dbo.T"},
		{"trino default port added", "trino://t", "c.s.t", "prod", "trino://t:8080", "c.s.t"},
		{"redshift default port added", "redshift://c.eu-west-1", "d.s.t", "prod", "redshift://c.eu-west-1:5439", "d.s.t"},
		{"kafka default port added to every host", "kafka://b1,B2:9093,b3", "t", "streaming", "kafka://b1:9092,b2:9093,b3:9092", "t"},
		{"snowflake: no default port, none added", "snowflake://acme-prod", "t", "prod", "snowflake://acme-prod", "T"},
		{"unknown scheme keeps its port", "x-custom://h:5432", "t", "prod", "x-custom://h:5432", "t"},
		{"unknown scheme gets none", "x-custom://h", "t", "prod", "x-custom://h", "t"},
		{"https without port: none added (RFC 3986)", "https://crm.example.com", "contacts", "prod", "https://crm.example.com", "contacts"},
		{"postgresql alias", "postgresql://db:5432", "a.b.c", "prod", "postgres://db:5432", "a.b.c"},
		{"mysql default port", "mysql://db:3306", "shop.orders", "prod", "mysql://db:3306", "shop.orders"},
		{"mysql other port kept", "mysql://db:3307", "shop.orders", "prod", "mysql://db:3307", "shop.orders"},
		{"port leading zeros", "mysql://db:03307", "t", "prod", "mysql://db:3307", "t"},
		{"redshift default port and lower-case name", "redshift://Cluster.eu-west-1:5439", "Dev.Public.Sales", "prod", "redshift://cluster.eu-west-1:5439", "dev.public.sales"},
		{"kafka default port", "kafka://Broker-1.Kafka.internal:9092", "Orders.V1", "streaming", "kafka://broker-1.kafka.internal:9092", "Orders.V1"},
		{"kafka bootstrap list", "kafka://B1:9092,B2:9093", "t", "streaming", "kafka://b1:9092,b2:9093", "t"},
		{"sqlserver alias and port", "mssql://SQL01:1433", "db.dbo.T", "prod", "sqlserver://sql01:1433", "db.dbo.T"},
		{"oracle port", "oracle://ora:1521", "HR.EMP", "prod", "oracle://ora:1521", "HR.EMP"},
		{"mongodb port", "mongodb://m:27017", "app.users", "prod", "mongodb://m:27017", "app.users"},
		{"https port", "https://CRM.example.com:443/", "contacts", "prod", "https://crm.example.com", "contacts"},
		{"http port", "http://api:80", "x", "prod", "http://api", "x"},
		{"credentials dropped", "postgres://analyst:secret@db:5432", "a.b.c", "prod", "postgres://db:5432", "a.b.c"},
		{"ipv6 host", "postgres://[FE80::1]:5432", "a.b.c", "prod", "postgres://[fe80::1]:5432", "a.b.c"},
		{"trailing slashes on namespace", "hdfs://NameNode:8020///", "/warehouse/t", "prod", "hdfs://namenode:8020", "/warehouse/t"},
		{"namespace path kept, case kept", "s3://bucket/Prefix/", "Key", "prod", "s3://bucket/Prefix", "Key"},
		{"s3a alias, leading slash stripped", "s3a://Raw-Events", "/clickstream/2026/", "prod", "s3://raw-events", "clickstream/2026"},
		{"s3n alias", "s3n://b", "k", "prod", "s3://b", "k"},
		{"gs key", "gs://Bucket", "//a/b", "prod", "gs://bucket", "a/b"},
		{"abfss container kept", "abfss://Data@Acct.dfs.core.windows.net", "/raw/x", "prod", "abfss://Data@acct.dfs.core.windows.net", "raw/x"},
		{"hdfs keeps leading slash", "hdfs://nn:9000", "/user/hive/t/", "prod", "hdfs://nn:9000", "/user/hive/t"},
		{"file bare namespace", "FILE", "/opt/data/x.csv", "prod", "file", "/opt/data/x.csv"},
		{"file root", "file", "///", "prod", "file", "/"},
		{"file uri without host", "file://", "/tmp/x", "prod", "file", "/tmp/x"},
		{"file uri with path", "file:///mnt/", "x/", "prod", "file:///mnt", "x"},
		{"bigquery bare, name case kept", "BigQuery", "Proj.DataSet.Table", "prod", "bigquery", "Proj.DataSet.Table"},
		{"snowflake upper-case", "snowflake://ACME-DEV", "analytics.marts.customers", "dev", "snowflake://acme-dev", "ANALYTICS.MARTS.CUSTOMERS"},
		{"snowflake quoted segment verbatim", "snowflake://acme-prod", `db."Mixed.Case".t`, "prod", "snowflake://acme-prod", `DB."Mixed.Case".T`},
		{"hive lower-case", "hive://Metastore:9083", "Raw.ClickStream", "prod", "hive://metastore:9083", "raw.clickstream"},
		{"trino lower-case", "trino://t:8080", "Cat.Sch.Tab", "prod", "trino://t:8080", "cat.sch.tab"},
		{"postgres not folded", "postgres://db", "Sales.Public.Orders", "prod", "postgres://db:5432", "Sales.Public.Orders"},
		{"opaque namespace kept", "My-Datasource", "X", "prod", "My-Datasource", "X"},
		{"opaque namespace trailing slash", "my-ns/", "x", "prod", "my-ns", "x"},
		{"glue arn kept", "arn:aws:glue:us-east-1:123456789012", "table/db/t", "prod", "arn:aws:glue:us-east-1:123456789012", "table/db/t"},
		// Issue 14 item 1: embedded databases name a local file (dbt-duckdb sends duckdb://{profile path}).
		{"duckdb absolute path", "duckdb:///tmp/Proj/warehouse.duckdb", "warehouse.main.Orders", "prod", "duckdb:///tmp/Proj/warehouse.duckdb", "warehouse.main.Orders"},
		{"duckdb absolute path, scheme case and trailing slash", "DuckDB:///tmp/w.duckdb/", "w.main.t", "prod", "duckdb:///tmp/w.duckdb", "w.main.t"},
		{"duckdb in memory", "duckdb://:memory:", "memory.main.t", "prod", "duckdb://:memory:", "memory.main.t"},
		{"duckdb relative path (host form, unchanged)", "duckdb://warehouse.duckdb", "warehouse.main.t", "prod", "duckdb://warehouse.duckdb", "warehouse.main.t"},
		{"sqlite absolute path", "sqlite:///var/lib/app/App.db", "main.users", "prod", "sqlite:///var/lib/app/App.db", "main.users"},
		{"sqlite windows path", `sqlite://C:\data\app.db`, "main.users", "prod", `sqlite://C:\data\app.db`, "main.users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, ns, nm, err := n.Dataset(tt.ns, tt.nm)
			if err != nil {
				t.Fatalf("Dataset: %v", err)
			}
			if env != tt.env || ns != tt.wNS || nm != tt.wN {
				t.Fatalf("got (%q, %q, %q), want (%q, %q, %q)", env, ns, nm, tt.env, tt.wNS, tt.wN)
			}
		})
	}
}

func TestDatasetRejects(t *testing.T) {
	n := newTestNormalizer(t)
	tests := []struct {
		name   string
		ns, nm string
		part   string
		rule   string
	}{
		{"empty namespace", "", "t", PartNamespace, RuleEmpty},
		{"empty name", "s3://b", "", PartName, RuleEmpty},
		{"name only slashes on object store", "s3://b", "///", PartName, RuleEmpty},
		{"namespace only slashes", "//", "t", PartNamespace, RuleEmpty},
		{"whitespace namespace", " postgres://db", "t", PartNamespace, RuleWhitespace},
		{"whitespace name", "postgres://db", "t ", PartName, RuleWhitespace},
		{"whitespace exposed by slash removal", "s3://b", "x /", PartName, RuleWhitespace},
		{"control character", "postgres://db", "a\x00b", PartName, RuleControl},
		{"invalid utf8", "postgres://db", "a\xffb", PartName, RuleUTF8},
		{"NUL", "postgres://db", "a\x00b", PartName, RuleControl},
		{"BEL", "postgres://db", "a\ab", PartName, RuleControl},
		{"ESC", "postgres://db", "a\x1bb", PartName, RuleControl},
		{"CR", "postgres://db", "a\rb", PartName, RuleControl},
		{"LF", "postgres://db", "a\nb", PartName, RuleControl},
		{"TAB", "postgres://db", "a\tb", PartName, RuleControl},
		{"DEL", "postgres://db", "a\x7fb", PartName, RuleControl},
		{"NEL U+0085", "postgres://db", "a\u0085b", PartName, RuleControl},
		{"C1 U+009B", "postgres://db", "a\u009bb", PartName, RuleControl},
		{"control in namespace", "post\x00gres://db", "t", PartNamespace, RuleControl},
		{"leading space", "postgres://db", " t", PartName, RuleWhitespace},
		{"name over the cap", "postgres://db", strings.Repeat("n", MaxNameBytes+1), PartName, RuleMaxLength},
		{"namespace over the cap", "ns-" + strings.Repeat("n", MaxNamespaceBytes), "t", PartNamespace, RuleMaxLength},
		{"bad scheme", "1pg://db", "t", PartNamespace, RuleInvalidURI},
		{"space in host", "postgres://my db", "t", PartNamespace, RuleInvalidURI},
		{"empty host", "postgres://", "t", PartNamespace, RuleNoHost},
		{"empty bucket", "s3:///key", "t", PartNamespace, RuleNoHost},
		{"port not a number", "postgres://db:pg", "t", PartNamespace, RuleInvalidPort},
		{"port out of range", "postgres://db:70000", "t", PartNamespace, RuleInvalidPort},
		{"port zero", "postgres://db:0", "t", PartNamespace, RuleInvalidPort},
		{"two colons", "postgres://db:1:2", "t", PartNamespace, RuleInvalidURI},
		{"empty host in list", "kafka://a:9092,", "t", PartNamespace, RuleInvalidURI},
		{"duckdb names no file", "duckdb:///", "t", PartNamespace, RuleNoHost},
		{"sqlite names no file", "sqlite://", "t", PartNamespace, RuleNoHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := n.Dataset(tt.ns, tt.nm)
			var ie *IdentityError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalidIdentity) {
				t.Fatalf("err = %v, want *IdentityError", err)
			}
			if ie.Part != tt.part || ie.Rule != tt.rule || ie.Entity != EntityDataset {
				t.Fatalf("got %s/%s/%s (%v), want %s/%s", ie.Entity, ie.Part, ie.Rule, err, tt.part, tt.rule)
			}
		})
	}
}

func TestJob(t *testing.T) {
	n := newTestNormalizer(t)
	tests := []struct {
		ns, nm, wNS, wN, rule string
	}{
		{"airflow-prod", "Finance_Daily.Load", "airflow-prod", "Finance_Daily.Load", ""},
		{"Airflow-Prod", "x", "Airflow-Prod", "x", ""},
		{"dbt-prod/", "m", "dbt-prod", "m", ""},
		{"HTTPS://Scheduler.Example.com:443/", "dag", "https://scheduler.example.com", "dag", ""},
		{"", "x", "", "", RuleEmpty},
		{"ns", "", "", "", RuleEmpty},
		{"ns", "a\nb", "", "", RuleControl},
		{"ns ", "x", "", "", RuleWhitespace},
	}
	for _, tt := range tests {
		ns, nm, err := n.Job(tt.ns, tt.nm)
		if tt.rule != "" {
			var ie *IdentityError
			if !errors.As(err, &ie) || ie.Rule != tt.rule || ie.Entity != EntityJob {
				t.Errorf("Job(%q, %q) err = %v, want rule %s", tt.ns, tt.nm, err, tt.rule)
			}
			continue
		}
		if err != nil || ns != tt.wNS || nm != tt.wN {
			t.Errorf("Job(%q, %q) = (%q, %q, %v), want (%q, %q)", tt.ns, tt.nm, ns, nm, err, tt.wNS, tt.wN)
		}
	}
}

func TestEnvironmentPrefixes(t *testing.T) {
	n := newTestNormalizer(t)
	tests := []struct{ ns, env string }{
		{"postgres://pg-staging.internal", "staging"},
		{"postgres://pg-staging.internal:6543", "staging"},
		{"postgres://pg-staging.internal/db", "staging"},
		{"postgres://pg-staging.internal2", "prod"},        // not a boundary
		{"postgres://pg-staging.internal.eu", "prod"},      // another host
		{"s3://staging-lake", "staging"},                   // free prefix ending in "-"
		{"s3a://STAGING-lake", "staging"},                  // alias and case applied before matching
		{"s3://staging-sandbox", "dev"},                    // longest prefix wins
		{"s3://staging-sandbox/x", "dev"},                  // longest prefix wins
		{"s3://staging-sandboxes", "staging"},              // not a boundary for the longer one
		{"kafka://anything:19092", "streaming"},            // scheme-wide prefix
		{"snowflake://acme-dev", "dev"},                    // exact
		{"snowflake://acme-devtest", "prod"},               // not a boundary
		{"bigquery", "prod"},                               // default
		{"postgres://pg-staging.internal:5432", "staging"}, // the default port written (ADR 0026): same environment
	}
	for _, tt := range tests {
		env, _, _, err := n.Dataset(tt.ns, "t")
		if err != nil || env != tt.env {
			t.Errorf("Dataset(%q) env = %q, %v; want %q", tt.ns, env, err, tt.env)
		}
	}
}

// TestKeyNamespace: node keys and environments hash the canonical namespace without its default port, which is
// the canonical form of projection versions 1 and 2 (ADR 0026): every dataset keeps its key and id across the
// change, and two canonical namespaces never share a key form.
func TestKeyNamespace(t *testing.T) {
	n := newTestNormalizer(t)
	tests := []struct{ sent, v2, v3 string }{
		{"postgres://warehouse", "postgres://warehouse", "postgres://warehouse:5432"},
		{"POSTGRESQL://Warehouse:5432", "postgres://warehouse", "postgres://warehouse:5432"},
		{"postgres://warehouse:6543", "postgres://warehouse:6543", "postgres://warehouse:6543"},
		{"postgres://[FE80::1]", "postgres://[fe80::1]", "postgres://[fe80::1]:5432"},
		{"hive://localhost:9083", "hive://localhost", "hive://localhost:9083"},
		{"kafka://b1,b2:9093", "kafka://b1,b2:9093", "kafka://b1:9092,b2:9093"},
		{"hdfs://nn/user", "hdfs://nn/user", "hdfs://nn:8020/user"},
		{"https://api:443", "https://api", "https://api"},
		{"s3://b", "s3://b", "s3://b"},
		{"abfss://c@acct.dfs.core.windows.net", "abfss://c@acct.dfs.core.windows.net", "abfss://c@acct.dfs.core.windows.net"},
		{"my-ns", "my-ns", "my-ns"},
		{"duckdb:///abs/w.duckdb", "duckdb:///abs/w.duckdb", "duckdb:///abs/w.duckdb"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		_, ns, _, err := n.Dataset(tt.sent, "t")
		if err != nil || ns != tt.v3 {
			t.Errorf("Dataset(%q) = %q, %v; want %q", tt.sent, ns, err, tt.v3)
			continue
		}
		if k := KeyNamespace(ns); k != tt.v2 {
			t.Errorf("KeyNamespace(%q) = %q, want the version-2 form %q", ns, k, tt.v2)
		} else if other, dup := seen[k]; dup && other != ns {
			t.Errorf("%q and %q share the key form %q", other, ns, k)
		} else {
			seen[k] = ns
		}
		if c, err := CanonicalNamespace(tt.v2); err != nil || c != tt.v3 {
			t.Errorf("CanonicalNamespace(%q) (a version-2 stored form) = %q, %v; want %q", tt.v2, c, err, tt.v3)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		key  string
	}{
		{"no default", Config{}, "defaultEnv"},
		{"bad default", Config{DefaultEnv: "Prod"}, "defaultEnv"},
		{"bad env", Config{DefaultEnv: "prod", Environments: map[string]string{"s3://x": ""}}, "environments[s3://x]"},
		{"bad prefix", Config{DefaultEnv: "prod", Environments: map[string]string{"postgres://db:x": "dev"}}, "environments[postgres://db:x]"},
		{"two spellings, two envs", Config{DefaultEnv: "prod", Environments: map[string]string{"postgres://db:5432": "dev", "POSTGRES://DB": "test"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var ce *ConfigError
			if !errors.As(err, &ce) || (tt.key != "" && ce.Key != tt.key) {
				t.Fatalf("Validate = %v, want ConfigError on %q", err, tt.key)
			}
			if _, err := New(tt.cfg); err == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
	if err := (Config{DefaultEnv: "prod", Environments: map[string]string{"postgres://db:5432": "dev", "POSTGRES://DB": "dev"}}).Validate(); err != nil {
		t.Fatalf("same env under two spellings is fine: %v", err)
	}
}

func TestNameAtTheCapIsAccepted(t *testing.T) {
	n := newTestNormalizer(t)
	if _, _, _, err := n.Dataset("ns-"+strings.Repeat("n", MaxNamespaceBytes-3), strings.Repeat("x", MaxNameBytes)); err != nil {
		t.Fatalf("at the caps: %v", err)
	}
	if _, _, err := n.Job("ns", strings.Repeat("j", MaxNameBytes+1)); err == nil {
		t.Fatal("a job name over the cap was accepted")
	}
}

func TestField(t *testing.T) {
	tests := []struct{ path, rule string }{
		{"a.b", ""},
		{" quoted col ", ""},
		{"", RuleEmpty},
		{"a\x00b", RuleControl},
		{"a\u0085", RuleControl},
		{"a\xff", RuleUTF8},
		{strings.Repeat("f", MaxFieldBytes+1), RuleMaxLength},
	}
	for _, tt := range tests {
		err := Field(tt.path)
		var ie *IdentityError
		switch {
		case tt.rule == "" && err != nil:
			t.Errorf("Field(%.20q) = %v, want nil", tt.path, err)
		case tt.rule != "" && (!errors.As(err, &ie) || ie.Rule != tt.rule || ie.Part != PartField):
			t.Errorf("Field(%.20q) = %v, want rule %s", tt.path, err, tt.rule)
		}
	}
}
