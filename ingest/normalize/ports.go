package normalize

// The tables below are switch statements rather than package variables: they are constant, and nothing can
// change them at run time.

// defaultPort is the port a scheme's service listens on unless configured otherwise ("" when the scheme has no
// default we know). The one rule for default ports (portWritten) decides whether the canonical form writes it.
// Only well-established IANA or vendor defaults are listed: a scheme not listed keeps exactly the port it was sent
// with, or none.
func defaultPort(scheme string) string {
	switch scheme {
	case "postgres":
		return "5432"
	case "mysql", "mariadb":
		return "3306"
	case "redshift":
		return "5439"
	case "kafka":
		return "9092"
	case "sqlserver":
		return "1433"
	case "oracle":
		return "1521"
	case "mongodb":
		return "27017"
	case "cassandra":
		return "9042"
	case "db2":
		return "50000"
	case "teradata":
		return "1025"
	case "hive":
		return "9083"
	case "hdfs":
		return "8020"
	case "trino", "presto":
		return "8080"
	case "clickhouse":
		return "8123"
	case "vertica":
		return "5433"
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// portWritten is the one rule for default ports: every namespace of a scheme with a default port has one canonical
// form, the one its naming spec writes. OpenLineage's naming spec writes database, warehouse, stream and
// file-system namespaces as {scheme}://{host}:{port} (postgres://db:5432, hive://metastore:9083,
// kafka://broker:9092), so those carry the port, added when the producer left it out (the spec's form in answers,
// as every other OpenLineage tool shows it). Web URLs (http, https) are not named by that spec; RFC 3986's normal
// form leaves their default port out. Either way the form with and the form without the default port are one
// identity (docs/adr/0026-identity-in-answers.md).
func portWritten(scheme string) bool {
	return scheme != "http" && scheme != "https"
}

// schemeAlias maps scheme spellings that name the same storage to the one OpenLineage uses.
func schemeAlias(scheme string) string {
	switch scheme {
	case "s3a", "s3n":
		return "s3"
	case "postgresql":
		return "postgres"
	case "mssql":
		return "sqlserver"
	}
	return scheme
}

// isObjectStore: the dataset name is the object key, without leading slashes.
func isObjectStore(scheme string) bool {
	switch scheme {
	case "s3", "gs", "abfss", "abfs", "wasbs", "wasb":
		return true
	}
	return false
}

// isPathStore: the dataset name is an absolute path; its leading slash is part of the name.
func isPathStore(scheme string) bool {
	switch scheme {
	case "hdfs", "file", "dbfs":
		return true
	}
	return false
}

// isAzureStore: the container sits in the userinfo position (container@account...) and is part of the identity.
func isAzureStore(scheme string) bool {
	switch scheme {
	case "abfss", "abfs", "wasbs", "wasb":
		return true
	}
	return false
}

// hostOptional: the namespace may have an empty authority (file:///...).
func hostOptional(scheme string) bool {
	return scheme == "file" || scheme == "dbfs"
}

// isLocalFileDB: embedded databases whose namespace is the path of a local database file (duckdb://{path},
// sqlite://{path}) rather than a host; see localFileNamespace.
func isLocalFileDB(scheme string) bool {
	return scheme == "duckdb" || scheme == "sqlite"
}

// isBareNamespace: platform namespaces written without "://" (OpenLineage uses "bigquery" and "file"), which are
// lower-cased like a scheme. Their lower-cased form is also the scheme that selects the name rules.
func isBareNamespace(lower string) bool {
	switch lower {
	case "bigquery", "file", "dbfs":
		return true
	}
	return false
}

// Name case folding.
const (
	foldNone = iota
	foldLower
	foldUpper
)

// nameFolding: only platforms whose identifiers are case-insensitive as producers report them are folded, and
// double-quoted segments are always kept verbatim. Everything else (postgres, mysql, sqlserver, oracle,
// bigquery, kafka, object stores, ...) is case-sensitive and kept as sent.
func nameFolding(scheme string) int {
	switch scheme {
	case "snowflake": // unquoted identifiers are stored upper-case; Airflow's provider reports them so
		return foldUpper
	case "redshift", // identifiers case-insensitive, folded to lower case by default
		"hive",            // the metastore stores lower-case names
		"trino", "presto", // identifiers are lower-cased by the engine
		"awsathena", "athena": // Glue catalog names are lower-case
		return foldLower
	}
	return foldNone
}
