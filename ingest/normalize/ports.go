package normalize

// The tables below are switch statements rather than package variables: they are constant, and nothing can
// change them at run time.

// defaultPort is the one rule for default ports: a port equal to its scheme's default is dropped, any other
// port is kept. Only well-established IANA or vendor defaults are listed.
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
