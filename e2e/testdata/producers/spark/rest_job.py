"""Spark through the Iceberg REST catalog (e2e/producers_spark_rest_test.go; docs/iceberg.md).

Creates a table in the REST catalog with CTAS and appends to it, then reads its `snapshots` metadata table into a
second table (a metadata table is never the table itself: ADR 0064); the OpenLineage listener sends every event to
Headwater over the HTTP transport with an API key, and to a file for the test's logs.

usage: rest_job.py WORKDIR HEADWATER_URL API_KEY JOB_NAMESPACE EVENTS_FILE JARS CATALOG_URI DB
"""
import sys

import olsession

work, url, key, namespace, events, jars, catalog_uri, db = sys.argv[1:9]

spark = (
    olsession.builder("hw_producers_spark_rest", work, url, key, namespace, events, jars)
    .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.lake.type", "rest")
    .config("spark.sql.catalog.lake.uri", catalog_uri)
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lake.{db}")
spark.sql(f"CREATE TABLE lake.{db}.orders USING iceberg AS SELECT * FROM VALUES (1, 10.0), (2, 20.5) AS t(order_id, amount)")
spark.sql(f"INSERT INTO lake.{db}.orders VALUES (3, 7.5)")
spark.sql(f"CREATE TABLE lake.{db}.snapshot_log USING iceberg AS SELECT snapshot_id, operation FROM lake.{db}.orders.snapshots")
spark.stop()
