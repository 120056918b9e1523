"""Spark reads an evolved Iceberg table through the REST catalog at two snapshots (e2e/iceberg_spark_evolution_test.go;
ADR 0065, ADR 0083).

One session: the table's first snapshot by time travel (`VERSION AS OF`), projecting the columns as they were
named then (customer, amount), and its current snapshot, projecting customer_name (customer renamed) and amount
(dropped and re-added); each written to a parquet directory, so the OpenLineage listener reports the column
lineage of both reads.

usage: evolved_read_job.py WORKDIR HEADWATER_URL API_KEY JOB_NAMESPACE EVENTS_FILE JARS CATALOG_URI TABLE SNAPSHOT
"""
import sys

import olsession

work, url, key, namespace, events, jars, catalog_uri, table, first = sys.argv[1:10]

spark = (
    olsession.builder("hw_spark_evolved_read", work, url, key, namespace, events, jars)
    .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.lake.type", "rest")
    .config("spark.sql.catalog.lake.uri", catalog_uri)
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

spark.sql(f"SELECT customer, amount FROM lake.{table} VERSION AS OF {first}").write.mode("overwrite").parquet(f"{work}/read_s1")
spark.sql(f"SELECT customer_name, amount FROM lake.{table}").write.mode("overwrite").parquet(f"{work}/read_s2")
spark.stop()
